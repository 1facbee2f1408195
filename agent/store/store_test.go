package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

func open(t testing.TB, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dir, store.Options{Wait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func newSession(workspace string, at time.Time) agent.Session {
	return agent.Session{ID: agent.NewSessionID(), Workspace: workspace, Title: "t", Created: at, Updated: at, Model: "anthropic/claude-sonnet-4-5"}
}

// conversation writes a session with n user/assistant exchanges, each
// assistant message with a text, a reasoning and a tool part, and returns
// what it wrote.
func conversation(t testing.TB, s *store.Store, workspace string, n int) store.Export {
	t.Helper()
	ctx := context.Background()
	sess := newSession(workspace, t0)
	if err := s.PutSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	var msgs []agent.MessageWithParts
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Second)
		user := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleUser, Created: at}
		asst := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: at,
			Completed: at.Add(time.Second), Finish: agent.FinishStop, Usage: agent.Usage{Input: 10, Output: 5}, Cost: 0.001, Model: sess.Model}
		userParts := []agent.Part{{ID: agent.NewPartID(), MessageID: user.ID, SessionID: sess.ID, Kind: agent.PartText, Text: fmt.Sprintf("question %d", i)}}
		asstParts := []agent.Part{
			{ID: agent.NewPartID(), MessageID: asst.ID, SessionID: sess.ID, Kind: agent.PartReasoning, Text: "thinking", Signature: "sig"},
			{ID: agent.NewPartID(), MessageID: asst.ID, SessionID: sess.ID, Kind: agent.PartTool, Tool: &agent.ToolCall{
				CallID: "call_1", Name: "read", Status: agent.ToolCompleted, Kind: agent.ToolKindRead,
				Input: json.RawMessage(`{"path":"main.go"}`), Output: "package main",
				Locations: []agent.Location{{Path: "main.go", Line: 1}},
				Diff:      &agent.Diff{Path: "main.go", OldText: "a", NewText: "b"}, Metadata: json.RawMessage(`{"k":1}`)}},
			{ID: agent.NewPartID(), MessageID: asst.ID, SessionID: sess.ID, Kind: agent.PartText, Text: fmt.Sprintf("answer %d", i),
				Started: at, Ended: at.Add(time.Second)},
			{ID: agent.NewPartID(), MessageID: asst.ID, SessionID: sess.ID, Kind: agent.PartStepFinish, Usage: &agent.Usage{Input: 10, Output: 5}, Cost: 0.001},
		}
		for _, m := range []struct {
			msg   agent.Message
			parts []agent.Part
		}{{user, userParts}, {asst, asstParts}} {
			if err := s.PutMessage(ctx, m.msg); err != nil {
				t.Fatal(err)
			}
			for _, p := range m.parts {
				if err := s.PutPart(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			msgs = append(msgs, agent.MessageWithParts{Message: m.msg, Parts: m.parts})
		}
	}
	sess.Messages = 2 * n
	if n > 0 {
		sess.Updated = t0.Add(time.Duration(n-1)*time.Second + time.Second)
	}
	return store.Export{Version: store.ExportVersion, Session: sess, Messages: msgs}
}

func TestRoundTrip(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	want := conversation(t, s, "/w", 3)

	got, err := s.Export(ctx, want.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("export differs from what was written:\n got %+v\nwant %+v", got, want)
	}
}

func TestUpdatePartInPlace(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	e := conversation(t, s, "/w", 1)
	p := e.Messages[1].Parts[2]
	p.Text += " and more"
	if err := s.PutPart(ctx, p); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages(ctx, e.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(msgs[1].Parts); n != 4 {
		t.Fatalf("rewriting a part changed the part count to %d", n)
	}
	if got := msgs[1].Parts[2].Text; got != "answer 0 and more" {
		t.Fatalf("part text = %q", got)
	}
}

func TestListSessionsNewestFirstByWorkspace(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	var ids []agent.ID
	for i := range 5 {
		ws := "/a"
		if i%2 == 1 {
			ws = "/b"
		}
		sess := newSession(ws, t0.Add(time.Duration(i)*time.Minute))
		ids = append(ids, sess.ID)
		if err := s.PutSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	// Touching the oldest session in /a makes it the newest.
	if err := s.PutMessage(ctx, agent.Message{ID: agent.NewMessageID(), SessionID: ids[0], Role: agent.RoleUser, Created: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	child := newSession("/a", t0.Add(2*time.Hour))
	child.ParentID = ids[0]
	if err := s.PutSession(ctx, child); err != nil {
		t.Fatal(err)
	}

	got, err := s.ListSessions(ctx, store.ListOptions{Workspace: "/a"})
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.ID{ids[0], ids[4], ids[2]}
	if gotIDs := ids2(got); !reflect.DeepEqual(gotIDs, want) {
		t.Fatalf("list /a = %v, want %v", gotIDs, want)
	}
	if got[0].Messages != 1 {
		t.Fatalf("message count = %d, want 1", got[0].Messages)
	}
	limited, err := s.ListSessions(ctx, store.ListOptions{Limit: 2, Children: true})
	if err != nil {
		t.Fatal(err)
	}
	if gotIDs := ids2(limited); !reflect.DeepEqual(gotIDs, []agent.ID{child.ID, ids[0]}) {
		t.Fatalf("list with limit and children = %v", gotIDs)
	}
}

func ids2(ss []agent.Session) []agent.ID {
	var out []agent.ID
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func TestPutMessageTwiceCountsOnce(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	sess := newSession("/w", t0)
	s.PutSession(ctx, sess)
	m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
	for range 3 {
		if err := s.PutMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := s.Session(ctx, sess.ID)
	if got.Messages != 1 {
		t.Fatalf("a message written three times counts %d", got.Messages)
	}
	if err := s.PutMessage(ctx, agent.Message{ID: agent.NewMessageID(), SessionID: agent.NewSessionID()}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a message of a missing session: %v, want ErrNotFound", err)
	}
}

func TestResolve(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	sess := newSession("/w", t0)
	s.PutSession(ctx, sess)
	short := strings.ToLower(strings.TrimPrefix(string(sess.ID), agent.SessionPrefix)[:20])
	for _, in := range []string{string(sess.ID), short, agent.SessionPrefix + strings.ToUpper(short)} {
		got, err := s.Resolve(ctx, in)
		if err != nil || got != sess.ID {
			t.Errorf("Resolve(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := s.Resolve(ctx, "ZZZZ"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resolve of nothing: %v", err)
	}
	other := newSession("/w", t0)
	s.PutSession(ctx, other)
	_, err := s.Resolve(ctx, "0")
	if !errors.Is(err, store.ErrAmbiguous) || !strings.Contains(err.Error(), string(sess.ID)) {
		t.Errorf("Resolve of a shared prefix: %v", err)
	}
	// The error's example is the end of a session it found, and that end
	// names it.
	if m := regexp.MustCompile(`instead \((\w+) names the first\)`).FindStringSubmatch(fmt.Sprint(err)); m == nil {
		t.Errorf("the ambiguous prefix's error shows no end to give instead: %v", err)
	} else if got, err := s.Resolve(ctx, m[1]); err != nil || (got != sess.ID && got != other.ID) {
		t.Errorf("Resolve(%q), the end the error suggested = %v, %v", m[1], got, err)
	}
	// IDs of one day share their beginning; their random end tells them
	// apart.
	for _, id := range []agent.ID{sess.ID, other.ID} {
		end := string(id)[len(id)-6:]
		if got, err := s.Resolve(ctx, strings.ToLower(end)); err != nil || got != id {
			t.Errorf("Resolve(%q), the end of %s = %v, %v", end, id, got, err)
		}
	}
}

func TestDeleteSession(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	keep := conversation(t, s, "/w", 2)
	gone := conversation(t, s, "/w", 2)
	child := newSession("/w", t0)
	child.ParentID = gone.Session.ID
	s.PutSession(ctx, child)

	if err := s.DeleteSession(ctx, gone.Session.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []agent.ID{gone.Session.ID, child.ID} {
		if _, err := s.Session(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("session %s after delete: %v", id, err)
		}
	}
	if _, err := s.Messages(ctx, gone.Session.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("messages after delete: %v", err)
	}
	got, err := s.Export(ctx, keep.Session.ID)
	if err != nil || !reflect.DeepEqual(*got, keep) {
		t.Fatalf("the other session changed: %v", err)
	}
	if err := s.DeleteSession(ctx, gone.Session.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

func TestGrants(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	a := store.Grant{Workspace: "/w", Permission: "bash", Pattern: "git status*", Action: "allow", Created: t0}
	b := store.Grant{Workspace: "/w", Permission: "edit", Pattern: "*", Action: "deny", Created: t0.Add(time.Second)}
	other := store.Grant{Workspace: "/w2", Permission: "bash", Pattern: "*", Action: "allow", Created: t0}
	for _, g := range []store.Grant{b, a, other} {
		if err := s.PutGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Grants(ctx, "/w")
	if err != nil || !reflect.DeepEqual(got, []store.Grant{a, b}) {
		t.Fatalf("grants = %+v, %v", got, err)
	}
	if err := s.DeleteGrant(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Grants(ctx, "/w")
	if !reflect.DeepEqual(got, []store.Grant{b}) {
		t.Fatalf("after delete: %+v", got)
	}
}

func TestExportImportLossless(t *testing.T) {
	src := open(t, t.TempDir())
	ctx := context.Background()
	want := conversation(t, src, "/w", 4)
	e, err := src.Export(ctx, want.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back store.Export
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	dst := open(t, t.TempDir())
	if err := dst.Import(ctx, &back); err != nil {
		t.Fatal(err)
	}
	got, err := dst.Export(ctx, want.Session.ID)
	if err != nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("imported session differs (%v):\n got %+v\nwant %+v", err, got, want)
	}
	if err := dst.Import(ctx, &back); !errors.Is(err, store.ErrExists) {
		t.Fatalf("importing over an existing session: %v", err)
	}
	bad := back
	bad.Messages = append([]agent.MessageWithParts(nil), back.Messages...)
	bad.Session.ID = agent.NewSessionID()
	if err := dst.Import(ctx, &bad); err == nil || !strings.Contains(err.Error(), "belongs to session") {
		t.Fatalf("importing messages of another session: %v", err)
	}
	if _, err := dst.Session(ctx, bad.Session.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused import left a session behind: %v", err)
	}
}

// closedDB opens the badger database under a closed store directly, the way
// damage would reach it.
func closedDB(t *testing.T, dir string) *badger.DB {
	t.Helper()
	// Writing with badger directly is what darman's witness of the files
	// it closed would call damage.
	os.Remove(filepath.Join(store.DatabaseDir(dir), "store.witness"))
	db, err := badger.Open(badger.DefaultOptions(store.DatabaseDir(dir)).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestUnreadableRecordIsAClearError(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(context.Background(), dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := conversation(t, s, "/w", 1)
	s.Close()

	db := closedDB(t, dir)
	key := []byte("p/" + string(e.Session.ID) + "/" + string(e.Messages[0].Message.ID) + "/" + string(e.Messages[0].Parts[0].ID))
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set(key, []byte("{not json")) }); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s = open(t, dir)
	_, err = s.Messages(context.Background(), e.Session.ID)
	if err == nil || !strings.Contains(err.Error(), string(key)) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("reading a damaged record: %v; want an error naming the record and the data dir", err)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(context.Background(), dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := closedDB(t, dir)
	db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("meta/schema"), []byte("99")) })
	db.Close()

	_, err = store.Open(context.Background(), dir, store.Options{})
	if err == nil || !strings.Contains(err.Error(), "newer darman") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("opening a store of schema 99: %v", err)
	}
}

func TestDamagedDatabaseIsAClearError(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(context.Background(), dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	written := conversation(t, s, "/w", 2)
	s.Close()
	if err := os.WriteFile(filepath.Join(store.DatabaseDir(dir), "MANIFEST"), []byte("garbage, not a manifest"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(context.Background(), dir, store.Options{})
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "darman doctor --repair") {
		t.Fatalf("opening a damaged store: %v", err)
	}
	// The tables are read without the manifest: repair brings the
	// session back, and keeps the damaged manifest aside as it was.
	got, err := store.Repair(dir, nil)
	if err != nil || !got.Damaged || got.Unreadable != "" || got.Sessions != 1 || len(got.Lost) != 0 {
		t.Fatalf("repairing a store whose manifest is garbage: %+v, %v", got, err)
	}
	if b, err := os.ReadFile(filepath.Join(got.Aside, "MANIFEST")); err != nil || string(b) != "garbage, not a manifest" {
		t.Fatalf("the damaged manifest was not kept aside: %q, %v", b, err)
	}
	e, err := open(t, dir).Export(context.Background(), written.Session.ID)
	if err != nil || !reflect.DeepEqual(*e, written) {
		t.Fatalf("the session after repair: %v", err)
	}
}

func TestSecondHandleIsAClientAndTakesOver(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	first := open(t, dir)
	second := open(t, dir)
	if !first.Owner() || second.Owner() {
		t.Fatalf("owner flags: first %v, second %v", first.Owner(), second.Owner())
	}
	written := conversation(t, second, "/w", 2)
	if got, err := first.Export(ctx, written.Session.ID); err != nil || !reflect.DeepEqual(*got, written) {
		t.Fatalf("the owner does not see what the client wrote: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// The client's next call finds the owner gone and takes over.
	got, err := second.Export(ctx, written.Session.ID)
	if err != nil || !reflect.DeepEqual(*got, written) {
		t.Fatalf("after handover: %v", err)
	}
	if !second.Owner() {
		t.Fatal("the client did not become the owner")
	}
	if _, err := first.Stats(ctx); err == nil {
		t.Fatal("a closed store answered")
	}
}

func TestCompactShrinksValueLog(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	sess := newSession("/w", t0)
	s.PutSession(ctx, sess)
	m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
	s.PutMessage(ctx, m)
	big := strings.Repeat("tool output that is long and will sit in the value log\n", 2000) // ~110 KB
	for range 1500 {                                                                        // ~165 MB: several value-log files
		p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartTool,
			Tool: &agent.ToolCall{CallID: "c", Name: "bash", Status: agent.ToolCompleted, Output: big}}
		if err := s.PutPart(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := s.Stats(ctx)
	if err := s.DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Stats(ctx)

	t.Logf("value log %d MB → %d MB", before.ValueLogBytes>>20, after.ValueLogBytes>>20)
	if after.ValueLogBytes >= before.ValueLogBytes/2 {
		t.Fatalf("value log did not shrink after deleting everything: %d → %d bytes", before.ValueLogBytes, after.ValueLogBytes)
	}
}

// truncatedTable writes a store with a table file (badger writes one when
// it closes), then cuts that file to part of its length, and returns the
// table's path.
func truncatedTable(t *testing.T, dir string, keep float64) string {
	t.Helper()
	s, err := store.Open(context.Background(), dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	conversation(t, s, "/w", 50)
	s.Close()
	tables, _ := filepath.Glob(filepath.Join(store.DatabaseDir(dir), "*.sst"))
	if len(tables) == 0 {
		t.Fatal("badger wrote no table")
	}
	info, err := os.Stat(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(tables[0], int64(float64(info.Size())*keep)); err != nil {
		t.Fatal(err)
	}
	return tables[0]
}

func TestTruncatedTableIsAnErrorNotACrash(t *testing.T) {
	for _, keep := range []float64{0, 0.001, 0.5, 0.999} {
		t.Run(fmt.Sprint(keep), func(t *testing.T) {
			dir := t.TempDir()
			table := truncatedTable(t, dir, keep)
			_, err := store.Open(context.Background(), dir, store.Options{})
			if !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), dir) ||
				!strings.Contains(err.Error(), filepath.Base(table)) || !strings.Contains(err.Error(), "darman doctor --repair") {
				t.Fatalf("opening a store with a truncated table: %v", err)
			}
		})
	}
}

// TestRepairMovesTheDamageAsideAndKeepsTheRest damages one of two tables
// (cut, or deleted): repair keeps the damaged files aside as they were,
// names the table in what it could not read, and brings its records back
// from the journal.
func TestRepairMovesTheDamageAsideAndKeepsTheRest(t *testing.T) {
	for _, damage := range []struct {
		name  string
		do    func(path string) error
		aside func(info os.FileInfo, err error) bool // the table as kept aside
		lost  string
	}{
		{"cut", func(p string) error { return os.Truncate(p, 100) },
			func(info os.FileInfo, err error) bool { return err == nil && info.Size() == 100 }, ""},
		{"deleted", os.Remove,
			func(_ os.FileInfo, err error) bool { return errors.Is(err, os.ErrNotExist) }, "missing"},
	} {
		t.Run(damage.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			// Two sessions in two tables: badger writes a table each time it closes.
			s := open(t, dir)
			kept := conversation(t, s, "/w", 3)
			s.Close()
			first, _ := filepath.Glob(filepath.Join(store.DatabaseDir(dir), "*.sst"))
			s, err := store.Open(ctx, dir, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			conversation(t, s, "/w", 3)
			s.Close()
			all, _ := filepath.Glob(filepath.Join(store.DatabaseDir(dir), "*.sst"))
			if len(first) != 1 || len(all) != 2 {
				t.Fatalf("tables: %v then %v", first, all)
			}
			var damaged string
			for _, p := range all {
				if p != first[0] {
					damaged = p
				}
			}
			if err := damage.do(damaged); err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(dir, "mcp"), 0o700)

			got, err := store.Repair(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The damaged table's records come back from the journal.
			if !got.Damaged || len(got.Lost) != 1 || !strings.Contains(got.Lost[0], filepath.Base(damaged)) ||
				!strings.Contains(got.Lost[0], damage.lost) || got.Sessions != 2 || got.Unreadable != "" {
				t.Fatalf("repair: %+v", got)
			}
			if !damage.aside(os.Stat(filepath.Join(got.Aside, filepath.Base(damaged)))) {
				t.Fatalf("the damaged table was not kept aside as it was")
			}
			if _, err := os.Stat(filepath.Join(dir, "mcp")); err != nil {
				t.Fatalf("the MCP records moved: %v", err)
			}
			s = open(t, dir)
			e, err := s.Export(ctx, kept.Session.ID)
			if err != nil || !reflect.DeepEqual(*e, kept) {
				t.Fatalf("the readable session after repair: %v", err)
			}
			s.Close()

			again, err := store.Repair(dir, nil)
			if err != nil || again.Damaged {
				t.Fatalf("repairing a sound store: %+v, %v", again, err)
			}
		})
	}
}

func TestPagesWalkTheHistoryBackwards(t *testing.T) {
	dir := t.TempDir()
	open(t, dir)
	s := open(t, dir) // a client: pages travel over the socket too
	ctx := context.Background()
	e := conversation(t, s, "/w", 25) // 50 messages
	var got []agent.MessageWithParts
	before := agent.ID("")
	pages := 0
	for {
		pg, err := s.Page(ctx, e.Session.ID, store.PageOptions{Before: before, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got = append(pg.Messages, got...)
		if !pg.More {
			break
		}
		if len(pg.Messages) != 7 {
			t.Fatalf("a page with more before it has %d messages", len(pg.Messages))
		}
		before = pg.Messages[0].Message.ID
	}
	if pages != 8 || !reflect.DeepEqual(got, e.Messages) {
		t.Fatalf("%d pages, %d messages; not the session's history", pages, len(got))
	}
	last, err := s.Page(ctx, e.Session.ID, store.PageOptions{})
	if err != nil || last.More || !reflect.DeepEqual(last.Messages, e.Messages) {
		t.Fatalf("the default page of 50 messages: more %v, %d messages, %v", last.More, len(last.Messages), err)
	}
	if _, err := s.Page(ctx, agent.NewSessionID(), store.PageOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a page of no session: %v", err)
	}
}

func TestWindowIsTheHistoryFromTheLastCompaction(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	e := conversation(t, s, "/w", 600) // 1,200 messages: three pages
	if got, err := s.Window(ctx, e.Session.ID); err != nil || !reflect.DeepEqual(got, e.Messages) {
		t.Fatalf("the window of a session never compacted: %d messages, %v", len(got), err)
	}
	// A compaction two pages back from the end: the window spans pages.
	compact := func(i int) {
		m := e.Messages[i]
		p := agent.Part{ID: agent.NewPartID(), MessageID: m.Message.ID, SessionID: e.Session.ID, Kind: agent.PartCompaction, Text: "summary"}
		if err := s.PutPart(ctx, p); err != nil {
			t.Fatal(err)
		}
		e.Messages[i].Parts = append(e.Messages[i].Parts, p)
	}
	compact(300)
	if got, err := s.Window(ctx, e.Session.ID); err != nil || !reflect.DeepEqual(got, e.Messages[300:]) {
		t.Fatalf("the window after a compaction two pages back: %d messages, %v", len(got), err)
	}
	// A later compaction, in the first page read, is where it starts.
	for _, i := range []int{1100} {
		m := e.Messages[i]
		p := agent.Part{ID: agent.NewPartID(), MessageID: m.Message.ID, SessionID: e.Session.ID, Kind: agent.PartCompaction, Text: "summary"}
		if err := s.PutPart(ctx, p); err != nil {
			t.Fatal(err)
		}
		e.Messages[i].Parts = append(e.Messages[i].Parts, p)
	}
	got, err := s.Window(ctx, e.Session.ID)
	if err != nil || !reflect.DeepEqual(got, e.Messages[1100:]) {
		t.Fatalf("the window after compactions: %d messages, %v", len(got), err)
	}
}
