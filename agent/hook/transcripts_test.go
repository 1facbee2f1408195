package hook_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/store"
)

// transcriptStore reads a store as the transcripts do (cmd/darman's
// adapter is the same).
type transcriptStore struct{ *store.Store }

func (s transcriptStore) Last(ctx context.Context, id agent.ID, n int) ([]agent.MessageWithParts, error) {
	page, err := s.Page(ctx, id, store.PageOptions{Limit: n})
	return page.Messages, err
}

// transcriptSession is a stored session that addTurn grows.
type transcriptSession struct {
	st   *store.Store
	sess agent.Session
}

func newTranscriptSession(tb testing.TB) *transcriptSession {
	ctx := context.Background()
	dir := tb.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "store"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	now := time.Now().UTC()
	sess := agent.Session{ID: agent.NewSessionID(), Workspace: dir, Model: "anthropic/claude-sonnet-4-5", Created: now, Updated: now}
	if err := st.PutSession(ctx, sess); err != nil {
		tb.Fatal(err)
	}
	return &transcriptSession{st: st, sess: sess}
}

// addTurn stores a prompt and an answer with a bash call; the call's
// result comes with done, as a turn stores it once the tool ended.
func (s *transcriptSession) addTurn(tb testing.TB, i int, done bool) *agent.Part {
	ctx := context.Background()
	now := time.Now().UTC()
	user := agent.Message{ID: agent.NewMessageID(), SessionID: s.sess.ID, Role: agent.RoleUser, Created: now, Completed: now}
	answer := agent.Message{ID: agent.NewMessageID(), SessionID: s.sess.ID, Role: agent.RoleAssistant, Created: now, Completed: now, Finish: agent.FinishToolCalls}
	call := &agent.ToolCall{CallID: fmt.Sprintf("c%d", i), Name: "bash", Input: []byte(`{"command":"go test ./...","description":"run the tests"}`), Status: agent.ToolRunning}
	if done {
		call.Status, call.Output = agent.ToolCompleted, "ok  \texample.com/calc\t0.01s\n"
	}
	tool := agent.Part{ID: agent.NewPartID(), MessageID: answer.ID, SessionID: s.sess.ID, Kind: agent.PartTool, Tool: call}
	parts := []agent.Part{
		{ID: agent.NewPartID(), MessageID: user.ID, SessionID: s.sess.ID, Kind: agent.PartText, Text: fmt.Sprintf("step %d: run the tests and fix what fails", i)},
		{ID: agent.NewPartID(), MessageID: answer.ID, SessionID: s.sess.ID, Kind: agent.PartText, Text: "Running the tests."},
		tool,
	}
	for _, m := range []agent.Message{user, answer} {
		if err := s.st.PutMessage(ctx, m); err != nil {
			tb.Fatal(err)
		}
	}
	for _, p := range parts {
		if err := s.st.PutPart(ctx, p); err != nil {
			tb.Fatal(err)
		}
	}
	return &tool
}

// The transcript brought up to date event by event, as a session grows
// and its last call ends, is the one written whole.
func TestHookTranscriptGrowsAsWrittenWhole(t *testing.T) {
	ctx := context.Background()
	s := newTranscriptSession(t)
	dir := t.TempDir()
	h := hook.NewTranscripts(transcriptStore{s.st}, dir, s.sess.Workspace, nil)
	var path string
	for i := range 7 {
		p := s.addTurn(t, i, false)
		if path = h.Path(ctx, string(s.sess.ID)); path == "" {
			t.Fatal("no transcript")
		}
		p.Tool.Status, p.Tool.Output = agent.ToolCompleted, fmt.Sprintf("output %d\n", i)
		if err := s.st.PutPart(ctx, *p); err != nil {
			t.Fatal(err)
		}
		h.Path(ctx, string(s.sess.ID))
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := s.st.Session(ctx, s.sess.ID)
	msgs, _ := s.st.Messages(ctx, s.sess.ID)
	var want bytes.Buffer
	if err := hook.WriteTranscript(&want, s.sess.Workspace, sess, msgs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the transcript grown event by event differs from the whole one:\n%s\nwant:\n%s", got, want.Bytes())
	}
}

// BenchmarkHookTranscript measures what transcript_path costs an event
// whose hooks run once the session's file exists: bringing it up to date
// after one more turn, for a session of 20 and of 200 turns (a prompt, an
// answer with a bash call and its output, each). The first event of a
// session in a process writes it whole ("whole").
func BenchmarkHookTranscript(b *testing.B) {
	for _, turns := range []int{20, 200} {
		s := newTranscriptSession(b)
		for i := range turns {
			s.addTurn(b, i, true)
		}
		b.Run(fmt.Sprintf("turns=%d/update", turns), func(b *testing.B) {
			h := hook.NewTranscripts(transcriptStore{s.st}, b.TempDir(), s.sess.Workspace, nil)
			h.Path(context.Background(), string(s.sess.ID))
			for b.Loop() {
				if h.Path(context.Background(), string(s.sess.ID)) == "" {
					b.Fatal("no transcript")
				}
			}
		})
		b.Run(fmt.Sprintf("turns=%d/whole", turns), func(b *testing.B) {
			for b.Loop() {
				h := hook.NewTranscripts(transcriptStore{s.st}, b.TempDir(), s.sess.Workspace, nil)
				if h.Path(context.Background(), string(s.sess.ID)) == "" {
					b.Fatal("no transcript")
				}
			}
		})
	}
}
