package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent"
)

// Options tunes Open. The zero value is ready to use.
type Options struct {
	// Logger receives the store's and badger's log lines; nil discards them.
	Logger *slog.Logger
	// Wait bounds how long Open (and a call whose owner went away) keeps
	// trying to become the owner or to reach it. Zero means 30 seconds.
	Wait time.Duration
	// GCInterval is how often the owner collects value-log garbage. Zero
	// means every 5 minutes; negative means never.
	GCInterval time.Duration
	// ReadOnly opens the database read-only when no other darman process
	// owns it (one that does serves the calls either way): nothing on disk
	// is changed, writes fail, and a damaged store is an error rather than
	// an empty list. For commands that only read. On Windows, where
	// badger has no read-only mode, the store opens as for writing (after
	// the same consistency check).
	ReadOnly bool
}

// Store is a handle on the session store in one data directory. Whether this
// process owns the database or talks to the process that does is hidden
// behind it (see the package doc). It is safe for concurrent use; Close it
// when done, which hands ownership to another process if one is waiting.
type Store struct {
	dir  string
	opts Options
	log  *slog.Logger

	mu      sync.RWMutex // guards the fields below; held shared by calls
	owner   *owner       // set when this process owns the database
	client  *client      // set when another process does
	closed  bool
	rebuild sync.Mutex // one reconnection at a time
}

// Open opens the store in dir, creating it if needed.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Wait == 0 {
		opts.Wait = 30 * time.Second
	}
	if opts.GCInterval == 0 {
		opts.GCInterval = 5 * time.Minute
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("the data directory %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the data directory: %w", err)
	}
	s := &Store{dir: abs, opts: opts, log: opts.Logger.With("component", "store")}
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Dir is the data directory.
func (s *Store) Dir() string { return s.dir }

// Owner reports whether this process owns the database (rather than talking
// to the process that does).
func (s *Store) Owner() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.owner != nil
}

// Close releases the store. If this process owned the database, another
// darman process that is using it takes over.
func (s *Store) Close() error {
	s.rebuild.Lock()
	defer s.rebuild.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.disconnect()
}

// disconnect drops the current owner or client; s.mu is held.
func (s *Store) disconnect() error {
	var err error
	if s.owner != nil {
		err = s.owner.close()
		s.owner = nil
	}
	if s.client != nil {
		s.client.close()
		s.client = nil
	}
	return err
}

// connect becomes the owner or a client, whichever comes first, trying
// until opts.Wait has passed.
func (s *Store) connect(ctx context.Context) error {
	lockPath := filepath.Join(s.dir, "owner.lock")
	sock := ownerAddress(s.dir)
	deadline := time.Now().Add(s.opts.Wait)
	delay := 2 * time.Millisecond
	var lastErr error
	for {
		lock, err := tryLock(lockPath)
		if err != nil {
			return fmt.Errorf("cannot lock the session store in %s: %w", s.dir, err)
		}
		if lock != nil {
			o, err := startOwner(s.dir, sock, lock, s.opts, s.log)
			if err != nil {
				unlock(lock)
				return err
			}
			s.owner = o
			s.log.Debug("owner of the session store", "dir", s.dir)
			return nil
		}
		conn, err := dialOwner(sock)
		if err == nil {
			s.client = newClient(conn)
			s.log.Debug("client of the session store", "dir", s.dir)
			return nil
		}
		// The owner is starting up or handing over: try again shortly.
		lastErr = err
		if time.Now().After(deadline) {
			return fmt.Errorf("the session store in %s is locked by another darman process that does not answer on %s (%v); "+
				"if no darman is running, remove %s", s.dir, sock, lastErr, lockPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 100*time.Millisecond)
	}
}

// errClosed is returned by calls on a closed Store.
var errClosed = errors.New("the session store is closed")

// do runs a call on the owner, locally or over the socket. When the owner
// went away, it takes part in the handover and sends the call again.
func (s *Store) do(ctx context.Context, req *request) (response, error) {
	for {
		s.mu.RLock()
		o, c, closed := s.owner, s.client, s.closed
		if closed {
			s.mu.RUnlock()
			return response{}, errClosed
		}
		if o != nil {
			resp := o.local.do(req)
			s.mu.RUnlock()
			return resp, resp.err()
		}
		s.mu.RUnlock()

		ch, n, err := c.start(req)
		if err == nil {
			select {
			case <-ctx.Done():
				c.forget(n)
				return response{}, ctx.Err()
			case f, ok := <-ch:
				if ok && !f.Closing {
					return f.Resp, f.Resp.err()
				}
			}
		}
		// The owner is gone or going: take part in the handover, then send
		// the call again.
		if err := s.reconnect(ctx, c); err != nil {
			return response{}, err
		}
	}
}

// reconnect replaces the broken client c, unless another call already did.
func (s *Store) reconnect(ctx context.Context, broken *client) error {
	s.rebuild.Lock()
	defer s.rebuild.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if s.client != broken {
		return nil
	}
	s.log.Info("the owner of the session store went away; taking over or reconnecting", "dir", s.dir)
	s.disconnect()
	return s.connect(ctx)
}

// PutSession creates or replaces a session record.
func (s *Store) PutSession(ctx context.Context, sess agent.Session) error {
	_, err := s.do(ctx, &request{Op: opPutSession, Session: sess})
	return err
}

// Session returns one session.
func (s *Store) Session(ctx context.Context, id agent.ID) (agent.Session, error) {
	resp, err := s.do(ctx, &request{Op: opGetSession, ID: id})
	return resp.Session, err
}

// Resolve turns a session ID or a unique prefix of one (with or without the
// "ses_" prefix, in any case) into the full ID.
func (s *Store) Resolve(ctx context.Context, prefix string) (agent.ID, error) {
	resp, err := s.do(ctx, &request{Op: opResolve, Text: prefix})
	return resp.ID, err
}

// ListSessions returns sessions, most recently updated first.
func (s *Store) ListSessions(ctx context.Context, opts ListOptions) ([]agent.Session, error) {
	resp, err := s.do(ctx, &request{Op: opListSessions, List: opts})
	return resp.Sessions, err
}

// DeleteSession removes a session with its messages, parts and sub-task
// sessions.
func (s *Store) DeleteSession(ctx context.Context, id agent.ID) error {
	_, err := s.do(ctx, &request{Op: opDeleteSession, ID: id})
	return err
}

// PutMessage creates or replaces a message. Its session must exist; the
// session's message count and update time follow.
func (s *Store) PutMessage(ctx context.Context, m agent.Message) error {
	_, err := s.do(ctx, &request{Op: opPutMessage, Message: m})
	return err
}

// PutPart creates or replaces a part. The record is the whole part: what
// was appended to it with AppendPart is dropped (the writer folds it into
// the part it puts).
func (s *Store) PutPart(ctx context.Context, p agent.Part) error {
	_, err := s.do(ctx, &request{Op: opPutPart, Part: p})
	return err
}

// AppendPart adds text to the end of a part that grows as it streams,
// without writing the part again: to its Text (a text or reasoning part) or
// to its Tool.Terminal (a tool call's output). p names the part (its IDs
// and Kind; nothing else is sent), which must have been put first; seq
// numbers its appends from 1, in the order they are to be read. Readers
// (Messages, Export) see the part with the appends joined to it; the
// writer puts the whole part when it stops growing, which replaces them.
// Putting the same append twice is harmless.
func (s *Store) AppendPart(ctx context.Context, p agent.Part, seq int, text string) error {
	ref := agent.Part{ID: p.ID, MessageID: p.MessageID, SessionID: p.SessionID, Kind: p.Kind}
	_, err := s.do(ctx, &request{Op: opAppendPart, Part: ref, Seq: seq, Text: text})
	return err
}

// Messages returns a session's messages with their parts, in order.
func (s *Store) Messages(ctx context.Context, session agent.ID) ([]agent.MessageWithParts, error) {
	resp, err := s.do(ctx, &request{Op: opMessages, ID: session})
	return resp.Messages, err
}

// Page returns a page of a session's history with its parts: by default
// its last 100 messages. A front shows a long session and continues it
// from its last page, reading older pages only when they are asked for,
// so that opening a session costs the same however long it is.
func (s *Store) Page(ctx context.Context, session agent.ID, opts PageOptions) (Page, error) {
	resp, err := s.do(ctx, &request{Op: opPage, ID: session, Page: opts})
	return Page{Messages: resp.Messages, More: resp.More}, err
}

// Window returns a session's history from its latest compaction on: the
// last message holding a compaction part and every message after it, or
// all of it when nothing was compacted. That is what a turn sends the
// model; it is read page by page from the end, so a long session that was
// compacted costs its window, not its whole history.
func (s *Store) Window(ctx context.Context, session agent.ID) ([]agent.MessageWithParts, error) {
	resp, err := s.do(ctx, &request{Op: opWindow, ID: session})
	return resp.Messages, err
}

// PutGrant records an "always" answer for a workspace.
func (s *Store) PutGrant(ctx context.Context, g Grant) error {
	_, err := s.do(ctx, &request{Op: opPutGrant, Grant: g})
	return err
}

// Grants returns a workspace's "always" answers, oldest first.
func (s *Store) Grants(ctx context.Context, workspace string) ([]Grant, error) {
	resp, err := s.do(ctx, &request{Op: opGrants, Text: workspace})
	return resp.Grants, err
}

// DeleteGrant forgets one "always" answer (Workspace, Permission and Pattern
// name it).
func (s *Store) DeleteGrant(ctx context.Context, g Grant) error {
	_, err := s.do(ctx, &request{Op: opDeleteGrant, Grant: g})
	return err
}

// Export returns a whole session as plain data.
func (s *Store) Export(ctx context.Context, id agent.ID) (*Export, error) {
	sess, err := s.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	msgs, err := s.Messages(ctx, id)
	if err != nil {
		return nil, err
	}
	blobs, err := s.blobsOfExport(ctx, id, msgs)
	if err != nil {
		return nil, err
	}
	return &Export{Version: ExportVersion, Session: sess, Messages: msgs, Blobs: blobs}, nil
}

// Import writes an exported session into the store. It refuses to replace
// a session that exists.
func (s *Store) Import(ctx context.Context, e *Export) error {
	_, err := s.do(ctx, &request{Op: opImport, Export: e})
	return err
}

// Stats describes the database.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	resp, err := s.do(ctx, &request{Op: opStats})
	return resp.Stats, err
}

// Compact reclaims the disk space of deleted sessions now rather than at the
// next background collection.
func (s *Store) Compact(ctx context.Context) error {
	_, err := s.do(ctx, &request{Op: opCompact})
	return err
}
