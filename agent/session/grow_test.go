package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/darman-dev/darman/agent/session"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/tool"
)

// answerChunks is an answer of n chunks of 6 bytes, each different, so
// that a lost, repeated or reordered chunk shows.
func answerChunks(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%05d ", i)
	}
	return out
}

// streamedText is what the events of one turn showed of a part kind.
func streamedText(evs []agent.Event, kind agent.EventKind) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Kind == kind {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func TestLongStreamIsStoredInLinearBytes(t *testing.T) {
	chunks := answerChunks(3000)
	reasoning := strings.Repeat("think ", 500)
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{{Reasoning: reasoning, TextChunks: chunks}}}, nil)
	wait := f.events(t)
	ctx := context.Background()
	before, err := f.store.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Run(ctx, session.Turn{Session: f.sess.ID, Prompt: session.Text("write a lot")}); err != nil {
		t.Fatal(err)
	}
	evs := wait()
	after, _ := f.store.Stats(ctx)
	want := strings.Join(chunks, "")
	if got := streamedText(evs, agent.EventMessageChunk); got != want {
		t.Fatalf("the events showed %d bytes, not the %d of the answer in order", len(got), len(want))
	}
	if got := streamedText(evs, agent.EventThoughtChunk); got != reasoning {
		t.Fatalf("the events showed %d bytes of thinking, not %d", len(got), len(reasoning))
	}
	msgs, err := f.store.Messages(ctx, f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, p := range msgs[len(msgs)-1].Parts {
		if p.Kind == agent.PartText || p.Kind == agent.PartReasoning {
			texts = append(texts, p.Text)
		}
	}
	if len(texts) != 2 || texts[0] != reasoning || texts[1] != want {
		t.Fatalf("stored %d text parts, not the thinking then the answer whole", len(texts))
	}
	// Twice the text (the appends, then the part put whole), plus the
	// messages, the session and a few kilobytes of keys.
	text := int64(len(want) + len(reasoning))
	written := after.Written - before.Written
	t.Logf("%d bytes written for %d bytes of text", written, text)
	if written > 2*text+32<<10 {
		t.Errorf("%d bytes written for %d bytes of text", written, text)
	}
}

func TestSlowStreamIsShownDeltaByDelta(t *testing.T) {
	chunks := answerChunks(4)
	// Deltas 250 ms apart, five times the 50 ms in which deltas are shown
	// together: a delta read 200 ms late (a loaded machine) still comes
	// after the window of the one before.
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{{TextChunks: chunks, Delay: llmtest.Duration(250 * time.Millisecond)}}}, nil)
	wait := f.events(t)
	if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("slowly")}); err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, e := range wait() {
		if e.Kind == agent.EventMessageChunk {
			shown = append(shown, e.Text)
		}
	}
	if strings.Join(shown, "|") != strings.Join(chunks, "|") {
		t.Fatalf("shown %q, want each delta as it came: %q", shown, chunks)
	}
}

// printer is a tool that prints two lines as a command would, 150 ms
// apart (progress is shown at most every 100 ms), then waits for release.
type printer struct{ printed, release chan struct{} }

func (printer) Info() tool.Info {
	return tool.Info{Name: "printer", Description: "prints", Schema: json.RawMessage(`{"type":"object"}`), Kind: agent.ToolKindExecute}
}

func (p printer) Run(ctx context.Context, env *tool.Env, _ json.RawMessage) (tool.Result, error) {
	env.Progress("line 1\n")
	time.Sleep(150 * time.Millisecond)
	env.Progress("line 1\nline 2\n")
	close(p.printed)
	<-p.release
	return tool.Result{Output: "line 1\nline 2\ndone\n", Title: "printer"}, nil
}

func TestRunningCommandOutputIsStoredAsItStreams(t *testing.T) {
	pr := printer{printed: make(chan struct{}), release: make(chan struct{})}
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "printer"}}},
		{Text: "Printed."},
	}}, nil, pr)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := f.svc.Run(ctx, session.Turn{Session: f.sess.ID, Prompt: session.Text("print")})
		done <- err
	}()
	<-pr.printed
	toolPart := func() *agent.ToolCall {
		msgs, err := f.store.Messages(ctx, f.sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			for _, p := range m.Parts {
				if p.Kind == agent.PartTool {
					return p.Tool
				}
			}
		}
		t.Fatal("no tool part stored")
		return nil
	}
	if call := toolPart(); call.Status != agent.ToolRunning || call.Terminal != "line 1\nline 2\n" {
		t.Fatalf("while it runs the stored call is %s with output %q", call.Status, call.Terminal)
	}
	close(pr.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if call := toolPart(); call.Status != agent.ToolCompleted || call.Terminal != "" || call.Output != "line 1\nline 2\ndone\n" {
		t.Fatalf("once done the stored call is %s, terminal %q, output %q", call.Status, call.Terminal, call.Output)
	}
}
