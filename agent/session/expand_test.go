package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/tool"
)

// blockingAsker holds every question until the context ends.
type blockingAsker struct{ asked chan struct{} }

func (a *blockingAsker) Ask(ctx context.Context, _ permission.Request) (permission.Reply, error) {
	a.asked <- struct{}{}
	<-ctx.Done()
	return permission.Reply{}, ctx.Err()
}

// eventLine is an event as one comparable line.
func eventLine(e agent.Event) string {
	switch e.Kind {
	case agent.EventState:
		return "state " + string(e.State) + " " + e.Reason
	case agent.EventPermission:
		return "permission " + e.Permission.Permission + " " + e.Permission.Answer
	case agent.EventUserMessage:
		return "user " + e.Text
	}
	return string(e.Kind)
}

// A command template's !`cmd` expands inside the turn: the turn has begun
// when the bash permission is asked, and the expanded text is the user's
// message.
func TestExpandInsideTheTurn(t *testing.T) {
	shellRules := func(o *session.Options) {
		o.Rules = []permission.Rule{{Permission: permission.Bash, Pattern: "*", Action: permission.Ask}}
	}
	look := &prompt.Command{Name: "look", Template: "Look: !`echo expanded`"}
	run := func(f *fixture, cmd *prompt.Command) (session.Result, error) {
		return f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Command: cmd})
	}

	t.Run("allowed", func(t *testing.T) {
		asker := &scriptedAsker{reply: permission.Reply{Answer: permission.AllowOnce}}
		f := newFixture(t, fixtureOptions{script: llmtest.Script{Steps: []llmtest.Step{{Text: "seen"}}}, asker: asker,
			tools: tool.Builtins(tool.Options{NoRipgrep: true}), service: shellRules})
		collect := f.events(t)
		msg, err := run(f, look)
		if err != nil || msg.Finish != agent.FinishStop {
			t.Fatalf("Run: %+v, %v", msg, err)
		}
		var lines []string
		for _, e := range collect() {
			if e.Kind == agent.EventState || e.Kind == agent.EventPermission || e.Kind == agent.EventUserMessage {
				lines = append(lines, eventLine(e))
			}
		}
		want := []string{"state running ", "state requires_action ", "permission bash ", "permission bash allow_once",
			"state running ", "user /look", "state idle stop"}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("events:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
		if !strings.Contains(f.srv.ModelCalls()[0].Get("messages.0").Raw, "Look: expanded") {
			t.Errorf("the model was not sent the expansion: %s", f.srv.ModelCalls()[0].Get("messages.0").Raw)
		}
	})

	t.Run("rejected", func(t *testing.T) {
		asker := &scriptedAsker{reply: permission.Reply{Answer: permission.RejectOnce}}
		f := newFixture(t, fixtureOptions{script: llmtest.Script{}, asker: asker,
			tools: tool.Builtins(tool.Options{NoRipgrep: true}), service: shellRules})
		collect := f.events(t)
		msg, err := run(f, look)
		if err != nil || msg.Finish != agent.FinishError || !strings.Contains(msg.Error, "echo expanded") {
			t.Fatalf("Run: %+v, %v; want a failed turn naming the command it ran", msg, err)
		}
		events := collect()
		last := events[len(events)-1]
		if last.State != agent.StateFailed || !strings.Contains(last.Reason, "echo expanded") {
			t.Errorf("the last event is %s, want the failure", eventLine(last))
		}
		if msgs, _ := f.store.Messages(context.Background(), f.sess.ID); len(msgs) != 0 || len(f.srv.ModelCalls()) != 0 {
			t.Errorf("a failed expansion stored %d messages and called the model %d times", len(msgs), len(f.srv.ModelCalls()))
		}
	})

	t.Run("cancelled while asking", func(t *testing.T) {
		asker := &blockingAsker{asked: make(chan struct{}, 1)}
		f := newFixture(t, fixtureOptions{script: llmtest.Script{}, asker: asker,
			tools: tool.Builtins(tool.Options{NoRipgrep: true}), service: shellRules})
		collect := f.events(t)
		done := make(chan session.Result, 1)
		go func() {
			msg, err := run(f, look)
			if err != nil {
				t.Error(err)
			}
			done <- msg
		}()
		<-asker.asked
		if !f.svc.Cancel(f.sess.ID) {
			t.Fatal("Cancel found no running turn while the command's permission was asked")
		}
		if msg := <-done; msg.Finish != agent.FinishCancelled {
			t.Errorf("finish %q, want cancelled", msg.Finish)
		}
		events := collect()
		if last := events[len(events)-1]; last.State != agent.StateIdle || last.Reason != string(agent.FinishCancelled) {
			t.Errorf("the last event is %s, want idle cancelled", eventLine(last))
		}
	})

	t.Run("empty", func(t *testing.T) {
		asker := &scriptedAsker{reply: permission.Reply{Answer: permission.AllowOnce}}
		f := newFixture(t, fixtureOptions{script: llmtest.Script{}, asker: asker,
			tools: tool.Builtins(tool.Options{NoRipgrep: true}), service: shellRules})
		msg, err := run(f, &prompt.Command{Name: "blank", Template: "!`printf ' '`"})
		if err != nil || msg.Finish != agent.FinishError || !strings.Contains(msg.Error, "empty") {
			t.Errorf("an empty expansion: %+v, %v", msg, err)
		}
	})
}
