package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/darman-dev/darman/agent"
)

// Checkpoints are kept beside the session they belong to,
//
//	c/<sessionID>/<messageID>   the checkpoint of the turn of that user message
//
// so that removing the session removes them (deleteSession drops the
// prefix) and a session's come back in turn order.
const checkpointPrefix = "c/"

func checkpointKey(c agent.Checkpoint) []byte {
	return []byte(checkpointPrefix + string(c.SessionID) + "/" + string(c.MessageID))
}

func checkpointsOf(session agent.ID) []byte {
	return []byte(checkpointPrefix + string(session) + "/")
}

// PutCheckpoint creates or replaces the checkpoint of a turn (its
// SessionID and MessageID name it). The session must exist.
func (s *Store) PutCheckpoint(ctx context.Context, c agent.Checkpoint) error {
	_, err := s.do(ctx, &request{Op: opPutCheckpoint, Checkpoint: c})
	return err
}

// Checkpoints returns a session's checkpoints in turn order; with an empty
// session, every session's (what the checkpoint store's garbage collection
// keeps alive).
func (s *Store) Checkpoints(ctx context.Context, session agent.ID) ([]agent.Checkpoint, error) {
	resp, err := s.do(ctx, &request{Op: opCheckpoints, ID: session})
	return resp.Checkpoints, err
}

// checkpoints runs opPutCheckpoint and opCheckpoints.
func (l *local) checkpoints(req *request) ([]agent.Checkpoint, error) {
	if req.Op == opPutCheckpoint {
		c := req.Checkpoint
		if c.SessionID == "" || c.MessageID == "" || strings.Contains(string(c.SessionID)+string(c.MessageID), "/") {
			return nil, fmt.Errorf("a checkpoint needs its session and its turn's message (got %q, %q)", c.SessionID, c.MessageID)
		}
		return nil, l.update(func(txn *wtx) error {
			if _, err := txn.Get(sessionKey(c.SessionID)); errors.Is(err, badger.ErrKeyNotFound) {
				return notFound("session", c.SessionID)
			} else if err != nil {
				return err
			}
			return l.putJSON(txn, checkpointKey(c), c)
		})
	}
	prefix := []byte(checkpointPrefix)
	if req.ID != "" {
		prefix = checkpointsOf(req.ID)
	}
	var out []agent.Checkpoint
	err := l.db.View(func(txn *badger.Txn) error {
		return l.scan(txn, prefix, func(key, b []byte) error {
			var c agent.Checkpoint
			if err := l.decode(key, b, &c); err != nil {
				return err
			}
			out = append(out, c)
			return nil
		})
	})
	return out, err
}
