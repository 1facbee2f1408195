package terminal

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/permission"
)

// A question given up (its turn cancelled) leaves no reader behind: the
// line typed after it does not answer the next question, which reads its
// own answer.
func TestTerminalAskerAfterAQuestionGivenUp(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	var out strings.Builder
	a := New(r, &out)
	req := permission.Request{Permission: "bash", Title: "rm -rf build"}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Ask(ctx, req); err == nil {
		t.Fatal("a question whose turn was cancelled was answered")
	}
	// The user answers the question that is gone.
	if _, err := io.WriteString(w, "y\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(a.lines) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the line typed was never read")
		}
		time.Sleep(time.Millisecond)
	}

	answered := make(chan permission.Reply, 1)
	go func() {
		reply, err := a.Ask(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		answered <- reply
	}()
	if _, err := io.WriteString(w, "stop, it deletes the cache\n"); err != nil {
		t.Fatal(err)
	}
	reply := <-answered
	if reply.Answer != permission.RejectOnce || reply.Message != "stop, it deletes the cache" {
		t.Errorf("the second question got %+v; want the rejection typed for it, not the stale yes", reply)
	}
}
