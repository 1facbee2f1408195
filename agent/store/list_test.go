package store_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// pages reads the whole list page by page.
func pages(t *testing.T, s *store.Store, opts store.ListOptions, size int) []agent.ID {
	t.Helper()
	var out []agent.ID
	opts.Limit = size
	for {
		page, err := s.ListSessions(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, sess := range page {
			out = append(out, sess.ID)
		}
		if len(page) < size {
			return out
		}
		opts.After = store.Cursor(page[len(page)-1])
	}
}

func ids(list []agent.Session) []agent.ID {
	var out []agent.ID
	for _, s := range list {
		out = append(out, s.ID)
	}
	return out
}

// Paging through the sessions (Limit and After, what darman.session.list
// pages with) gives the same sessions in the same order as the whole list,
// after updates that reorder them, removals, sub-tasks and across
// workspaces; and a store written before the index (schema 1) gets it at
// its first open.
func TestPagedListIsTheWholeList(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir)
	var all []agent.Session
	for i := range 40 {
		sess := newSession(fmt.Sprintf("/w%d", i%3), t0.Add(time.Duration(i%7)*time.Minute))
		if i%10 == 9 {
			sess.ParentID = all[0].ID
		}
		if err := s.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		all = append(all, sess)
	}
	// Updates move sessions up the list: a message, and a rename.
	m := agent.Message{ID: agent.NewMessageID(), SessionID: all[3].ID, Role: agent.RoleUser, Created: t0.Add(time.Hour)}
	if err := s.PutMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	renamed := all[5]
	renamed.Title, renamed.Updated = "renamed", t0.Add(2*time.Hour)
	if err := s.PutSession(ctx, renamed); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctx, all[7].ID); err != nil {
		t.Fatal(err)
	}
	check := func(s *store.Store) {
		t.Helper()
		for _, opts := range []store.ListOptions{{}, {Workspace: "/w1"}, {Children: true}, {Workspace: "/w0", Children: true}} {
			whole, err := s.ListSessions(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []int{1, 4, 100} {
				if got := pages(t, s, opts, size); !slices.Equal(got, ids(whole)) {
					t.Fatalf("%+v by pages of %d:\n%v\nthe whole list:\n%v", opts, size, got, ids(whole))
				}
			}
		}
		first, err := s.ListSessions(ctx, store.ListOptions{Limit: 2})
		if err != nil || len(first) != 2 || first[0].ID != renamed.ID || first[1].ID != all[3].ID {
			t.Fatalf("the most recently updated: %v, %v", ids(first), err)
		}
	}
	check(s)
	s.Close()

	// A store of schema 1, without the index.
	db := closedDB(t, dir)
	if err := db.DropPrefix([]byte("u/")); err != nil {
		t.Fatal(err)
	}
	db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("meta/schema"), []byte("1")) })
	db.Close()
	check(open(t, dir))
}

// writeSessions fills the store in args[0] with args[1] sessions of one
// message each, for scripts/bench-sessions.sh (role "sessions").
func writeSessions(args []string) int {
	ctx := context.Background()
	n, _ := strconv.Atoi(args[1])
	s, err := store.Open(ctx, args[0], store.Options{})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer s.Close()
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Second)
		sess := agent.Session{ID: agent.NewSessionID(), Workspace: fmt.Sprintf("/work/project%d", i%20), Title: fmt.Sprintf("session %d: a title of ordinary length", i),
			Model: "anthropic/claude-sonnet-4-5", Created: at, Updated: at}
		if err := s.PutSession(ctx, sess); err != nil {
			fmt.Println("error", err)
			return 1
		}
		m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleUser, Created: at}
		if err := s.PutMessage(ctx, m); err != nil {
			fmt.Println("error", err)
			return 1
		}
		p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartText, Text: "a prompt of a few words, as a user types one"}
		if err := s.PutPart(ctx, p); err != nil {
			fmt.Println("error", err)
			return 1
		}
	}
	st, _ := s.Stats(ctx)
	fmt.Printf("sessions %d bytes %d journal %d\n", st.Sessions, st.LSMBytes+st.ValueLogBytes, st.JournalBytes)
	return 0
}
