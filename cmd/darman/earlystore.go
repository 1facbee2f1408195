package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// records is the session store as a workspace's agent uses it: its
// sessions, checkpoints, grants and the hooks' transcripts. *store.Store
// is one; darman run's earlyStore is the other.
type records interface {
	PutSession(ctx context.Context, s agent.Session) error
	Session(ctx context.Context, id agent.ID) (agent.Session, error)
	PutMessage(ctx context.Context, m agent.Message) error
	PutPart(ctx context.Context, p agent.Part) error
	AppendPart(ctx context.Context, p agent.Part, seq int, text string) error
	Messages(ctx context.Context, session agent.ID) ([]agent.MessageWithParts, error)
	Window(ctx context.Context, session agent.ID) ([]agent.MessageWithParts, error)
	Page(ctx context.Context, session agent.ID, opts store.PageOptions) (store.Page, error)
	PutBlob(ctx context.Context, session agent.ID, data []byte) (string, error)
	Blob(ctx context.Context, session agent.ID, key string) ([]byte, error)
	PutCheckpoint(ctx context.Context, c agent.Checkpoint) error
	Checkpoints(ctx context.Context, session agent.ID) ([]agent.Checkpoint, error)
	Grants(ctx context.Context, workspace string) ([]store.Grant, error)
	PutGrant(ctx context.Context, g store.Grant) error
}

// earlyStore is darman run's session store while it opens: the store's
// open (badger's, 10–20 ms) runs beside the start of a new session's
// turn, whose first model request needs only what the turn itself wrote.
// Until the open ends, the records of the one new session (see hold) are
// kept here — its record, its messages, the parts of its user messages —
// and written to the store, in the order they came, as soon as it is
// open; everything else (a streamed answer's parts, images, checkpoints,
// grants, any other session) waits for the store and those writes. So
// what the model answers is stored before it is shown, as without it, and
// a turn that continues a session reads its history from the store. An
// open or a write that fails fails every call from then on, and the turn
// with it (see err).
type earlyStore struct {
	ready chan struct{} // closed once the open ended and the held records were written
	st    *store.Store
	err   error // the open's or the held writes' failure; set before ready closes

	mu sync.Mutex
	// holding: the records of the session made next are kept here (set
	// by hold, until the open ends).
	holding bool
	sess    *agent.Session
	msgs    []*agent.MessageWithParts // in ID order, as the store keeps them
	writes  []func(*store.Store) error
}

// openEarly starts open; hold says whether the session the turn makes
// next is to be kept until it ends (a new session; false to continue
// one, whose history is in the store).
func openEarly(open func() (*store.Store, error), hold bool) *earlyStore {
	e := &earlyStore{ready: make(chan struct{}), holding: hold}
	go func() {
		st, err := open()
		e.mu.Lock()
		defer e.mu.Unlock()
		e.st = st
		if err == nil {
			for _, w := range e.writes {
				if err = w(st); err != nil {
					err = fmt.Errorf("storing the new session: %w", err)
					break
				}
			}
		}
		e.err, e.holding, e.writes, e.sess, e.msgs = err, false, nil, nil, nil
		close(e.ready)
	}()
	return e
}

// store waits for the store to be open with the held records in it.
func (e *earlyStore) store(ctx context.Context) (*store.Store, error) {
	select {
	case <-e.ready:
		return e.st, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Err is the failure of the store's open or of the held records' writes,
// nil while it opens or when it opened.
func (e *earlyStore) Err() error {
	select {
	case <-e.ready:
		return e.err
	default:
		return nil
	}
}

// Close waits for the open and closes the store.
func (e *earlyStore) Close() error {
	<-e.ready
	if e.st == nil {
		return nil
	}
	return e.st.Close()
}

// held reports, with e.mu locked, whether id is the session kept here;
// on false e.mu is unlocked.
func (e *earlyStore) held(id agent.ID) bool {
	e.mu.Lock()
	if e.holding && e.sess != nil && e.sess.ID == id {
		return true
	}
	e.mu.Unlock()
	return false
}

// later queues a write of a held record; e.mu is held.
func (e *earlyStore) later(w func(*store.Store) error) { e.writes = append(e.writes, w) }

// copyOf is v as the store would give it back: decoded from its JSON.
// A record the store could not encode (text that is not UTF-8) fails
// with the error the store's own put gives, and is not held.
func copyOf[T any](v T) (T, error) {
	var out T
	b, err := jsonv2.Marshal(v)
	if err == nil {
		err = jsonv2.Unmarshal(b, &out)
	}
	return out, err
}

func (e *earlyStore) PutSession(ctx context.Context, s agent.Session) error {
	e.mu.Lock()
	if e.holding && (e.sess == nil && s.ParentID == "" || e.sess != nil && e.sess.ID == s.ID) {
		s, err := copyOf(s)
		if err != nil {
			e.mu.Unlock()
			return err
		}
		held := s // what the calls below change, apart from what is written
		e.sess = &held
		e.later(func(st *store.Store) error { return st.PutSession(context.WithoutCancel(ctx), s) })
		e.mu.Unlock()
		return nil
	}
	e.mu.Unlock()
	st, err := e.store(ctx)
	if err != nil {
		return err
	}
	return st.PutSession(ctx, s)
}

func (e *earlyStore) Session(ctx context.Context, id agent.ID) (agent.Session, error) {
	if e.held(id) {
		defer e.mu.Unlock()
		return copyOf(*e.sess)
	}
	st, err := e.store(ctx)
	if err != nil {
		return agent.Session{}, err
	}
	return st.Session(ctx, id)
}

// PutMessage keeps a held session's message, counting it in the session
// as the store does (a new message adds one; its times move Updated).
func (e *earlyStore) PutMessage(ctx context.Context, m agent.Message) error {
	if e.held(m.SessionID) {
		defer e.mu.Unlock()
		m, err := copyOf(m)
		if err != nil {
			return err
		}
		i, found := slices.BinarySearchFunc(e.msgs, m.ID, func(x *agent.MessageWithParts, id agent.ID) int { return cmpID(x.Message.ID, id) })
		if found {
			e.msgs[i].Message = m
		} else {
			e.msgs = slices.Insert(e.msgs, i, &agent.MessageWithParts{Message: m})
			e.sess.Messages++
		}
		for _, t := range []time.Time{m.Created, m.Completed} {
			if t.After(e.sess.Updated) {
				e.sess.Updated = t
			}
		}
		e.later(func(st *store.Store) error { return st.PutMessage(context.WithoutCancel(ctx), m) })
		return nil
	}
	st, err := e.store(ctx)
	if err != nil {
		return err
	}
	return st.PutMessage(ctx, m)
}

// PutPart keeps a part of a held session's user message; the answer's
// parts wait for the store, so that they are stored before they are
// shown.
func (e *earlyStore) PutPart(ctx context.Context, p agent.Part) error {
	if e.held(p.SessionID) {
		if m := e.message(p.MessageID); m != nil && m.Message.Role == agent.RoleUser && p.Kind != agent.PartCompaction {
			defer e.mu.Unlock()
			p, err := copyOf(p)
			if err != nil {
				return err
			}
			i, found := slices.BinarySearchFunc(m.Parts, p.ID, func(x agent.Part, id agent.ID) int { return cmpID(x.ID, id) })
			if found {
				m.Parts[i] = p
			} else {
				m.Parts = slices.Insert(m.Parts, i, p)
			}
			e.later(func(st *store.Store) error { return st.PutPart(context.WithoutCancel(ctx), p) })
			return nil
		}
		e.mu.Unlock()
	}
	st, err := e.store(ctx)
	if err != nil {
		return err
	}
	return st.PutPart(ctx, p)
}

// message is the held message id, or nil; e.mu is held.
func (e *earlyStore) message(id agent.ID) *agent.MessageWithParts {
	i, found := slices.BinarySearchFunc(e.msgs, id, func(x *agent.MessageWithParts, id agent.ID) int { return cmpID(x.Message.ID, id) })
	if !found {
		return nil
	}
	return e.msgs[i]
}

func cmpID(a, b agent.ID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Window of a held session is all of it: what it holds is its first
// turn's user message (and the answer's message, empty, as the request
// goes out); a compaction waits for the store (see PutPart).
func (e *earlyStore) Window(ctx context.Context, id agent.ID) ([]agent.MessageWithParts, error) {
	if e.held(id) {
		defer e.mu.Unlock()
		return e.history()
	}
	st, err := e.store(ctx)
	if err != nil {
		return nil, err
	}
	return st.Window(ctx, id)
}

func (e *earlyStore) Messages(ctx context.Context, id agent.ID) ([]agent.MessageWithParts, error) {
	if e.held(id) {
		defer e.mu.Unlock()
		return e.history()
	}
	st, err := e.store(ctx)
	if err != nil {
		return nil, err
	}
	return st.Messages(ctx, id)
}

// history is a copy of the held messages; e.mu is held.
func (e *earlyStore) history() ([]agent.MessageWithParts, error) {
	out := make([]agent.MessageWithParts, len(e.msgs))
	for i, m := range e.msgs {
		var err error
		if out[i], err = copyOf(*m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (e *earlyStore) AppendPart(ctx context.Context, p agent.Part, seq int, text string) error {
	st, err := e.store(ctx)
	if err != nil {
		return err
	}
	return st.AppendPart(ctx, p, seq, text)
}

func (e *earlyStore) Page(ctx context.Context, id agent.ID, opts store.PageOptions) (store.Page, error) {
	st, err := e.store(ctx)
	if err != nil {
		return store.Page{}, err
	}
	return st.Page(ctx, id, opts)
}

func (e *earlyStore) PutBlob(ctx context.Context, id agent.ID, data []byte) (string, error) {
	st, err := e.store(ctx)
	if err != nil {
		return "", err
	}
	return st.PutBlob(ctx, id, data)
}

func (e *earlyStore) Blob(ctx context.Context, id agent.ID, key string) ([]byte, error) {
	st, err := e.store(ctx)
	if err != nil {
		return nil, err
	}
	return st.Blob(ctx, id, key)
}

func (e *earlyStore) PutCheckpoint(ctx context.Context, c agent.Checkpoint) error {
	st, err := e.store(ctx)
	if err != nil {
		return err
	}
	return st.PutCheckpoint(ctx, c)
}

func (e *earlyStore) Checkpoints(ctx context.Context, id agent.ID) ([]agent.Checkpoint, error) {
	st, err := e.store(ctx)
	if err != nil {
		return nil, err
	}
	return st.Checkpoints(ctx, id)
}

func (e *earlyStore) Grants(ctx context.Context, workspace string) ([]store.Grant, error) {
	st, err := e.store(ctx)
	if err != nil {
		return nil, err
	}
	return st.Grants(ctx, workspace)
}

func (e *earlyStore) PutGrant(ctx context.Context, g store.Grant) error {
	st, err := e.store(ctx)
	if err != nil {
		return err
	}
	return st.PutGrant(ctx, g)
}
