package store

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/samber/lo"

	"github.com/darman-dev/darman/agent"
)

// The local store's reads: session ids by prefix or suffix, the session
// list (whole or by the recent index), a session's messages whole, by page
// or its window, and the scans under them. The writes are in local.go.

func (l *local) resolve(prefix string) (agent.ID, error) {
	if prefix == "" {
		return "", fmt.Errorf("an empty session ID: %w", ErrNotFound)
	}
	full := prefix
	if !strings.HasPrefix(full, agent.SessionPrefix) {
		full = agent.SessionPrefix + strings.ToUpper(prefix)
	}
	var found []agent.ID
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: sessionKey(agent.ID(full))})
		defer it.Close()
		for it.Rewind(); it.Valid() && len(found) < 2; it.Next() {
			found = append(found, agent.ID(strings.TrimPrefix(string(it.Item().Key()), sessionPrefix)))
		}
		return nil
	})
	if err == nil && len(found) == 0 && len(prefix) >= minSuffix && !strings.HasPrefix(prefix, agent.SessionPrefix) {
		// IDs begin with their time, so the sessions of one day share
		// their first characters; their last ones are random.
		found, err = l.bySuffix(strings.ToUpper(prefix))
	}
	switch {
	case err != nil:
		return "", err
	case len(found) == 0:
		return "", fmt.Errorf("no session matches %q (see `darman sessions list`): %w", prefix, ErrNotFound)
	case len(found) > 1:
		return "", fmt.Errorf("%q matches several sessions, among them %s; give more of the ID, or its last characters instead (%s names the first): %w",
			prefix, strings.Join(lo.Map(found, func(id agent.ID, _ int) string { return string(id) }), ", "), strings.ToLower(string(found[0][len(found[0])-6:])), ErrAmbiguous)
	}
	return found[0], nil
}

// minSuffix is the shortest end of an ID that resolve takes: four of its
// random characters make a collision among a user's sessions unlikely.
const minSuffix = 4

// bySuffix finds the sessions whose ID ends with suffix, reading keys
// only; at most three.
func (l *local) bySuffix(suffix string) ([]agent.ID, error) {
	var found []agent.ID
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(sessionPrefix)})
		defer it.Close()
		for it.Rewind(); it.Valid() && len(found) < 3; it.Next() {
			if id := strings.TrimPrefix(string(it.Item().Key()), sessionPrefix); strings.HasSuffix(id, suffix) {
				found = append(found, agent.ID(id))
			}
		}
		return nil
	})
	return found, err
}

func (l *local) listSessions(opts ListOptions) ([]agent.Session, error) {
	if (opts.Limit > 0 || opts.After != "") && l.indexed {
		return l.listRecent(opts)
	}
	var out []agent.Session
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(sessionPrefix), PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var s agent.Session
			item := it.Item()
			if err := item.Value(func(b []byte) error { return l.decode(item.Key(), b, &s) }); err != nil {
				return err
			}
			if opts.Workspace != "" && s.Workspace != opts.Workspace || s.ParentID != "" && !opts.Children {
				continue
			}
			out = append(out, s)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b agent.Session) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(string(b.ID), string(a.ID))
	})
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out, nil
}

// listed reports whether the index by update time names the session id
// (a pass over the index's keys: for a session that was not found).
func (l *local) listed(txn *badger.Txn, id agent.ID) bool {
	suffix := []byte("/" + invertID(id))
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(recentPrefix)})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		if bytes.HasSuffix(it.Item().Key(), suffix) {
			return true
		}
	}
	return false
}

// listRecent is a page of the list, read from the index of sessions by
// update time: the keys up to the page's end, then the page's records.
func (l *local) listRecent(opts ListOptions) ([]agent.Session, error) {
	var out []agent.Session
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(recentPrefix), PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		from := []byte(recentPrefix + opts.After)
		for it.Seek(from); it.Valid(); it.Next() {
			item := it.Item()
			if opts.After != "" && bytes.Equal(item.Key(), from) {
				continue
			}
			var keep bool
			if err := item.Value(func(v []byte) error {
				ws, parent, _ := bytes.Cut(v, []byte{0})
				keep = (opts.Workspace == "" || string(ws) == opts.Workspace) && (len(parent) == 0 || opts.Children)
				return nil
			}); err != nil {
				return err
			}
			if !keep {
				continue
			}
			id, ok := idOfRecent(item.Key())
			if !ok {
				return &DamageError{Dir: l.dir, Tables: []string{fmt.Sprintf("the index record %q is unreadable", item.Key())}}
			}
			var s agent.Session
			if err := l.get(txn, sessionKey(id), &s, "session", id); err != nil {
				return err
			}
			out = append(out, s)
			if opts.Limit > 0 && len(out) == opts.Limit {
				break
			}
		}
		return nil
	})
	return out, err
}

func (l *local) messages(session agent.ID) ([]agent.MessageWithParts, error) {
	var msgRaw, partRaw []record
	err := l.db.View(func(txn *badger.Txn) error {
		if _, err := txn.Get(sessionKey(session)); errors.Is(err, badger.ErrKeyNotFound) {
			return notFound("session", session)
		} else if err != nil {
			return err
		}
		var err error
		if msgRaw, err = collect(txn, messagesOf(session)); err != nil {
			return err
		}
		partRaw, err = collect(txn, partsOf(session))
		return err
	})
	if err != nil {
		return nil, err
	}
	return l.join(session, msgRaw, partRaw)
}

// join decodes messages and the parts under them into messages with
// parts.
func (l *local) join(session agent.ID, msgRaw, partRaw []record) ([]agent.MessageWithParts, error) {
	msgs, err := decodeAll[agent.Message](l, msgRaw)
	if err != nil {
		return nil, err
	}
	parts, err := l.decodeParts(session, partRaw)
	if err != nil {
		return nil, err
	}
	out := make([]agent.MessageWithParts, len(msgs))
	index := make(map[agent.ID]int, len(msgs))
	for i, m := range msgs {
		out[i].Message = m
		index[m.ID] = i
	}
	for _, p := range parts {
		// A part whose message was never written belongs to a turn that
		// died between the two writes; it is kept in the store but has
		// nothing to hang from.
		if i, ok := index[p.MessageID]; ok {
			out[i].Parts = append(out[i].Parts, p)
		}
	}
	return out, nil
}

// page reads the messages of a page, walking the session's messages
// backwards from its end (or from opts.Before), then the parts from the
// page's first message on: the cost is the page's, not the session's.
func (l *local) page(session agent.ID, opts PageOptions) (Page, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = 100
	}
	var pg Page
	var msgRaw, partRaw []record
	err := l.db.View(func(txn *badger.Txn) error {
		if _, err := txn.Get(sessionKey(session)); errors.Is(err, badger.ErrKeyNotFound) {
			return notFound("session", session)
		} else if err != nil {
			return err
		}
		prefix := messagesOf(session)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true, PrefetchValues: true, PrefetchSize: min(limit+1, 256)})
		defer it.Close()
		seek := append(bytes.Clone(prefix), 0xff)
		if opts.Before != "" {
			seek = messageKey(session, opts.Before)
		}
		for it.Seek(seek); it.Valid(); it.Next() {
			item := it.Item()
			if opts.Before != "" && bytes.Equal(item.Key(), seek) {
				continue
			}
			if len(msgRaw) == limit {
				pg.More = true
				break
			}
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			msgRaw = append(msgRaw, record{item.KeyCopy(nil), v})
		}
		if len(msgRaw) == 0 {
			return nil
		}
		slices.Reverse(msgRaw)
		first := agent.ID(msgRaw[0].key[len(prefix):])
		last := agent.ID(msgRaw[len(msgRaw)-1].key[len(prefix):])
		end := append(partsOf(session), last+"/\xff"...)
		pit := txn.NewIterator(badger.IteratorOptions{Prefix: partsOf(session), PrefetchValues: true, PrefetchSize: 256})
		defer pit.Close()
		for pit.Seek(append(partsOf(session), first+"/"...)); pit.Valid(); pit.Next() {
			item := pit.Item()
			if bytes.Compare(item.Key(), end) > 0 {
				break
			}
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			partRaw = append(partRaw, record{item.KeyCopy(nil), v})
		}
		return nil
	})
	if err != nil {
		return Page{}, err
	}
	pg.Messages, err = l.join(session, msgRaw, partRaw)
	return pg, err
}

// windowPage is how many messages window reads from the end before it
// gives up on finding a compaction there and reads the whole history.
const windowPage = 500

// window reads the last page of a session; when no compaction is in it,
// it reads the whole history in one pass, which costs little more than
// reading it page by page would (see Store.Window).
func (l *local) window(session agent.ID) ([]agent.MessageWithParts, error) {
	pg, err := l.page(session, PageOptions{Limit: windowPage})
	if err != nil {
		return nil, err
	}
	msgs := pg.Messages
	if pg.More && !slices.ContainsFunc(msgs, compacted) {
		if msgs, err = l.messages(session); err != nil {
			return nil, err
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if compacted(msgs[i]) {
			return msgs[i:], nil
		}
	}
	return msgs, nil
}

func compacted(m agent.MessageWithParts) bool {
	return slices.ContainsFunc(m.Parts, func(p agent.Part) bool { return p.Kind == agent.PartCompaction })
}

// decodeParts decodes the records found under partsOf(session): parts, each
// followed by what was appended to it while it streamed, which is added to
// its text (a tool call's: to its terminal output). An append whose part
// record is missing has nothing to join and is left out.
func (l *local) decodeParts(session agent.ID, recs []record) ([]agent.Part, error) {
	var whole []record
	var appends [][][]byte // appends[i]: the values appended to whole[i]
	for _, r := range recs {
		if !isAppend(session, r.key) {
			whole = append(whole, r)
			appends = append(appends, nil)
			continue
		}
		if n := len(whole); n > 0 && bytes.HasPrefix(r.key, whole[n-1].key) && r.key[len(whole[n-1].key)] == '/' {
			appends[n-1] = append(appends[n-1], r.value)
		}
	}
	parts, err := decodeAll[agent.Part](l, whole)
	if err != nil {
		return nil, err
	}
	for i, extra := range appends {
		if len(extra) == 0 {
			continue
		}
		p := &parts[i]
		field := &p.Text
		if p.Kind == agent.PartTool && p.Tool != nil {
			field = &p.Tool.Terminal
		}
		var b strings.Builder
		b.WriteString(*field)
		for _, v := range extra {
			b.Write(v)
		}
		*field = b.String()
	}
	return parts, nil
}

// record is a key and its value, copied out of a transaction.
type record struct{ key, value []byte }

func collect(txn *badger.Txn, prefix []byte) ([]record, error) {
	var out []record
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 256})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		v, err := item.ValueCopy(nil)
		if err != nil {
			return nil, err
		}
		out = append(out, record{item.KeyCopy(nil), v})
	}
	return out, nil
}

// decodeAll decodes records on every core: decoding is most of the time it
// takes to load a long session.
func decodeAll[T any](l *local, recs []record) ([]T, error) {
	out := make([]T, len(recs))
	workers := min(runtime.GOMAXPROCS(0), 1+len(recs)/512)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(recs); i += workers {
				if err := l.decode(recs[i].key, recs[i].value, &out[i]); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

func (l *local) scan(txn *badger.Txn, prefix []byte, fn func(key, value []byte) error) error {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 256})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		if err := item.Value(func(b []byte) error { return fn(item.Key(), b) }); err != nil {
			return err
		}
	}
	return nil
}
