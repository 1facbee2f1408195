package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
)

// What the user attached (an editor's @main.go lines, its terminal's
// output) is the model's to read: the user's message, live and stored,
// is what they typed and the attachments by name, not the fenced text.
func TestAttachedTextIsShownByName(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: llmtest.Script{Steps: []llmtest.Step{{Text: "It printed 42."}}}})
	collect := f.events(t)
	prompt := []session.Part{
		{Text: "what did it print?"},
		{File: "Terminal bash", Text: "$ echo $((6*7))\n42\n", Embedded: true},
		{File: "main.go lines 5-7", Text: "5\tfunc main() {\n6\t\tprintln(42)\n7\t}\n", Embedded: true},
	}
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: prompt})
	if err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("Run: %+v, %v", msg, err)
	}
	const want = "what did it print?\n\n@Terminal bash @main.go lines 5-7"
	var live []string
	for _, e := range collect() {
		if e.Kind == agent.EventUserMessage {
			live = append(live, e.Text)
		}
	}
	if len(live) != 1 || live[0] != want {
		t.Errorf("the live user message is %q, want %q", live, want)
	}
	msgs, err := f.store.Window(context.Background(), f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[0].Parts[0].Shown(); got != want {
		t.Errorf("the stored user message shows %q, want %q", got, want)
	}
	sent := f.srv.ModelCalls()[0].Get("messages.0.content.0.text").String()
	for _, s := range []string{"what did it print?", "Terminal bash:\n```\n$ echo $((6*7))\n42\n```", "main.go lines 5-7:\n```\n5\tfunc main() {"} {
		if !strings.Contains(sent, s) {
			t.Errorf("the model was not sent %q: %s", s, sent)
		}
	}
	if sess, _ := f.store.Session(context.Background(), f.sess.ID); sess.Title != "what did it print?" && !strings.HasPrefix(sess.Title, "what did it print?") {
		t.Errorf("the session's title is %q, from the typed text", sess.Title)
	}
}
