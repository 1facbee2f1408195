package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/internal/testenv"
)

// A front so slow that the turn's stream overflowed (bus.ErrOverflow)
// while a question was asked still gets the question: the question's
// event was lost with the others, and comes again, with the question,
// once the stream resumes — else the tool would wait for an answer to a
// question no one was shown. The Notification hook says when the
// question was asked, so the front is let go only after the loss.
func TestQuestionLostInAnOverflowStillComesOnTheStream(t *testing.T) {
	asked := filepath.Join(t.TempDir(), "asked.json")
	probes := make([]llmtest.ToolCall, 1500) // each a few events: past the bus's 4096
	for i := range probes {
		probes[i] = llmtest.ToolCall{ID: fmt.Sprintf("p%d", i), Name: "quick", Arguments: json.RawMessage(fmt.Sprintf(`{"x":"%d"}`, i))}
	}
	asker := &countingAsker{}
	h := withHooksAnd(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: probes},
		{ToolCalls: []llmtest.ToolCall{bashCall("c1", "touch marker")}},
		{Text: "Done."},
	}}, func(o *session.Options) {
		o.Tools = append(o.Tools, &probe{name: "quick", readOnly: true})
		o.Rules = []permission.Rule{{Permission: "*", Pattern: "*", Action: permission.Allow}, {Permission: permission.Bash, Pattern: "*", Action: permission.Ask}}
	}, asker, hook.Hook{Event: hook.Notification, Matcher: "permission_prompt", Command: "cat > " + strconv.Quote(asked)})

	release := make(chan struct{})
	var (
		first     atomic.Bool
		dropped   atomic.Bool
		questions atomic.Int32
	)
	ended := make(chan session.Result, 1)
	go func() {
		res, err := h.svc.Run(context.Background(), session.Turn{Session: h.sess.ID, Prompt: session.Text("probe, then touch"), Questions: true,
			Dropped: func() { dropped.Store(true) },
			Events: func(u session.Update) {
				if first.CompareAndSwap(false, true) {
					<-release // the front falls behind
				}
				if q := u.Question; q != nil {
					questions.Add(1)
					q.Answer(permission.Reply{Answer: permission.AllowOnce}, nil)
				}
			}})
		if err != nil {
			t.Error(err)
		}
		ended <- res
	}()
	testenv.Eventually(t, "the question asked (its Notification hook)", 60*time.Second, func() bool {
		_, err := os.Stat(asked)
		return err == nil
	})
	close(release)
	select {
	case res := <-ended:
		if res.Finish != "stop" {
			t.Errorf("the turn ended %q (%s)", res.Finish, res.Error)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the turn never ended: its question, lost in the overflow, never reached the stream")
	}
	if !dropped.Load() {
		t.Error("the stream never overflowed: the test did not test the loss")
	}
	if n := questions.Load(); n != 1 || asker.n.Load() != 0 {
		t.Errorf("the stream brought %d questions (want 1); the Asker was asked %d (want 0)", n, asker.n.Load())
	}
	if _, err := os.Stat(filepath.Join(h.root, "marker")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
}
