package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// growing writes a part as a streaming writer does: its first text, then
// appends, and returns the part and the text it should read as.
func growing(t *testing.T, s *store.Store, kind agent.PartKind, chunks int) (agent.Part, agent.Message, string) {
	t.Helper()
	ctx := context.Background()
	sess := newSession("/w", t0)
	if err := s.PutSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
	if err := s.PutMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: kind, Text: "first "}
	if err := s.PutPart(ctx, p); err != nil {
		t.Fatal(err)
	}
	want := p.Text
	for i := 1; i <= chunks; i++ {
		chunk := fmt.Sprintf("chunk %d ", i)
		if err := s.AppendPart(ctx, p, i, chunk); err != nil {
			t.Fatal(err)
		}
		want += chunk
	}
	return p, m, want
}

func partsOf(t *testing.T, s *store.Store, session agent.ID) []agent.Part {
	t.Helper()
	msgs, err := s.Messages(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	var out []agent.Part
	for _, m := range msgs {
		out = append(out, m.Parts...)
	}
	return out
}

func TestAppendsReadAsOnePart(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	p, m, want := growing(t, s, agent.PartText, 300)
	// A part after the growing one, in the same message, stays apart.
	after := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: p.SessionID, Kind: agent.PartText, Text: "after"}
	s.PutPart(ctx, after)

	parts := partsOf(t, s, p.SessionID)
	if len(parts) != 2 || parts[0].ID != p.ID || parts[0].Text != want || parts[1].Text != "after" {
		t.Fatalf("read back %d parts: %+v", len(parts), parts)
	}
	e, err := s.Export(ctx, p.SessionID)
	if err != nil || len(e.Messages) != 1 || e.Messages[0].Parts[0].Text != want {
		t.Fatalf("export: %+v, %v", e, err)
	}

	// Putting the whole part folds the appends away: the text is not doubled.
	p.Text = want
	if err := s.PutPart(ctx, p); err != nil {
		t.Fatal(err)
	}
	if parts := partsOf(t, s, p.SessionID); len(parts) != 2 || parts[0].Text != want {
		t.Fatalf("after folding: %+v", parts)
	}
}

func TestAppendsToAToolCallAreItsTerminalOutput(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := context.Background()
	sess := newSession("/w", t0)
	s.PutSession(ctx, sess)
	m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
	s.PutMessage(ctx, m)
	p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartTool,
		Tool: &agent.ToolCall{CallID: "c1", Name: "bash", Status: agent.ToolRunning}}
	s.PutPart(ctx, p)
	s.AppendPart(ctx, p, 1, "line 1\n")
	s.AppendPart(ctx, p, 2, "line 2\n")
	parts := partsOf(t, s, sess.ID)
	if len(parts) != 1 || parts[0].Tool.Terminal != "line 1\nline 2\n" || parts[0].Text != "" {
		t.Fatalf("read back: %+v %+v", parts, parts[0].Tool)
	}
}

func TestAppendsOverTheSocket(t *testing.T) {
	dir := t.TempDir()
	owner := open(t, dir)
	client := open(t, dir)
	if client.Owner() {
		t.Fatal("the second handle owns the store")
	}
	p, _, want := growing(t, client, agent.PartReasoning, 50)
	if parts := partsOf(t, owner, p.SessionID); len(parts) != 1 || parts[0].Text != want {
		t.Fatalf("the owner reads: %+v", parts)
	}
	if parts := partsOf(t, client, p.SessionID); len(parts) != 1 || parts[0].Text != want {
		t.Fatalf("the client reads: %+v", parts)
	}
}

func TestAppendsSurviveReopenAndGoWithTheSession(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(context.Background(), dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, _, want := growing(t, s, agent.PartText, 20)
	s.Close()
	s = open(t, dir)
	if parts := partsOf(t, s, p.SessionID); len(parts) != 1 || parts[0].Text != want {
		t.Fatalf("after reopening: %+v", parts)
	}
	if err := s.DeleteSession(context.Background(), p.SessionID); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Stats(context.Background()); st.Sessions != 0 {
		t.Fatalf("%d sessions left", st.Sessions)
	}
}

// BenchmarkStreamedPartBytes writes an answer of 3,000 chunks of 6 bytes
// (18 KB) as the agent writes a streamed part: its first chunk as the
// part, the rest as appends of the text that arrived in each flush (at
// most every 50 ms, here every 50 chunks, as at one chunk a millisecond),
// then the whole part once it ends. It reports the store's bytes written
// per byte of text and per part beyond twice the text.
func BenchmarkStreamedPartBytes(b *testing.B) {
	const chunks, perFlush = 3000, 50
	s := open(b, b.TempDir())
	ctx := context.Background()
	sess := newSession("/w", t0)
	s.PutSession(ctx, sess)
	chunk := "word. "
	var text int
	before, _ := s.Stats(ctx)
	for range b.N {
		m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
		s.PutMessage(ctx, m)
		from, _ := s.Stats(ctx)
		p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartText, Text: chunk}
		s.PutPart(ctx, p)
		var all strings.Builder
		all.WriteString(chunk)
		var pending strings.Builder
		seq := 0
		for i := 1; i < chunks; i++ {
			pending.WriteString(chunk)
			all.WriteString(chunk)
			if i%perFlush == 0 || i == chunks-1 {
				seq++
				if err := s.AppendPart(ctx, p, seq, pending.String()); err != nil {
					b.Fatal(err)
				}
				pending.Reset()
			}
		}
		p.Text = all.String()
		if err := s.PutPart(ctx, p); err != nil {
			b.Fatal(err)
		}
		to, _ := s.Stats(ctx)
		text += len(p.Text)
		if b.N == 1 {
			b.Logf("%d bytes written for %d bytes of text", to.Written-from.Written, len(p.Text))
		}
	}
	after, _ := s.Stats(ctx)
	written := float64(after.Written - before.Written)
	b.ReportMetric(written/float64(text), "bytes-written/text-byte")
	b.ReportMetric((written-2*float64(text))/float64(b.N), "bytes-over-2x/part")
}

// A part streamed for many minutes (one append every 50 ms: 14,000 is
// about twelve minutes of a model's reasoning) is folded whole when it
// ends, although badger takes only so many writes in one transaction
// (13,107 with 8 MiB memtables, 1,638 with 1 MiB ones): the appends are
// merged in runs first, and the part reads the same before, after and
// after a reopen.
func TestAPartOfManyAppendsFoldsWhole(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := context.Background()
	p, _, want := growing(t, s, agent.PartReasoning, 14000)
	if parts := partsOf(t, s, p.SessionID); len(parts) != 1 || parts[0].Text != want {
		t.Fatalf("before the fold: %d parts, text of %d bytes, want %d", len(parts), len(parts[0].Text), len(want))
	}
	p.Text = want
	if err := s.PutPart(ctx, p); err != nil {
		t.Fatalf("folding 14,000 appends: %v", err)
	}
	if parts := partsOf(t, s, p.SessionID); len(parts) != 1 || parts[0].Text != want {
		t.Fatalf("after the fold: text of %d bytes, want %d (doubled: %v)", len(parts[0].Text), len(want), len(parts[0].Text) == 2*len(want))
	}
	s.Close()
	s = open(t, dir)
	if parts := partsOf(t, s, p.SessionID); len(parts) != 1 || parts[0].Text != want {
		t.Fatalf("after a reopen: text of %d bytes, want %d", len(parts[0].Text), len(want))
	}
}
