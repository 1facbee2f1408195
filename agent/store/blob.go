package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/darman-dev/darman/agent"
)

// Blobs are large values a part refers to instead of holding them (an
// image pasted into a prompt): kept once per session under b/<session>/
// <sha256>, so a part record stays small however often it is rewritten or
// read, and the same image pasted twice is kept once. They go with their
// session.

const blobPrefix = "b/"

// MaxBlob is the largest blob PutBlob takes.
const MaxBlob = 32 << 20

func blobKey(session agent.ID, key string) []byte {
	return []byte(blobPrefix + string(session) + "/" + key)
}

func blobsOf(session agent.ID) []byte { return []byte(blobPrefix + string(session) + "/") }

// BlobKey is the key PutBlob files data under: its SHA-256, in hex.
func BlobKey(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// PutBlob keeps data with session and returns its key (BlobKey), which a
// part records (agent.File.Blob). Putting the same bytes again writes
// nothing.
func (s *Store) PutBlob(ctx context.Context, session agent.ID, data []byte) (string, error) {
	if len(data) == 0 {
		return "", errors.New("an empty blob")
	}
	if len(data) > MaxBlob {
		return "", fmt.Errorf("a blob of %d MiB; the store keeps up to %d MiB", len(data)>>20, MaxBlob>>20)
	}
	key := BlobKey(data)
	_, err := s.do(ctx, &request{Op: opPutBlob, ID: session, Text: key, Data: data})
	return key, err
}

// Blob reads the blob key of session; ErrNotFound when there is none.
func (s *Store) Blob(ctx context.Context, session agent.ID, key string) ([]byte, error) {
	resp, err := s.do(ctx, &request{Op: opBlob, ID: session, Text: key})
	return resp.Data, err
}

func (l *local) putBlob(session agent.ID, key string, data []byte) error {
	if BlobKey(data) != key {
		return errors.New("the blob's key is not the SHA-256 of its bytes")
	}
	return l.update(func(txn *wtx) error {
		if _, err := txn.Get(blobKey(session, key)); err == nil {
			return nil
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		return l.set(txn, blobKey(session, key), data)
	})
}

func (l *local) blob(session agent.ID, key string) (data []byte, err error) {
	err = l.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(blobKey(session, key))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("blob %s of session %s: %w", key, session, ErrNotFound)
		} else if err != nil {
			return err
		}
		data, err = it.ValueCopy(nil)
		return err
	})
	return data, err
}

// blobsOfExport reads the blobs the parts of msgs refer to, for Export.
func (s *Store) blobsOfExport(ctx context.Context, session agent.ID, msgs []agent.MessageWithParts) (map[string][]byte, error) {
	var out map[string][]byte
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.File == nil || p.File.Blob == "" || out[p.File.Blob] != nil {
				continue
			}
			data, err := s.Blob(ctx, session, p.File.Blob)
			if errors.Is(err, ErrNotFound) {
				continue // a part whose blob is lost exports as it reads: without it
			}
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = map[string][]byte{}
			}
			out[p.File.Blob] = data
		}
	}
	return out, nil
}
