package prompt_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/darman-dev/darman/agent/prompt"
)

// A session keeps the prompt it was first given; the memo keeps the
// sessions used last, up to its bound, and builds a forgotten one again.
func TestMemoKeepsRecentSessions(t *testing.T) {
	builds := map[string]int{}
	m := prompt.NewMemo(2, func(_ context.Context, session, model string, tools []string) (string, error) {
		builds[session]++
		if session == "bad" {
			return "", errors.New("no root")
		}
		return fmt.Sprintf("%s #%d for %s with %v", session, builds[session], model, tools), nil
	})
	ctx := context.Background()
	ask := func(session string, tools ...string) string {
		t.Helper()
		text, err := m.Prompt(ctx, session, "m", tools)
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	first := ask("a", "read")
	if again := ask("a", "read", "bash"); again != first {
		t.Errorf("session a's prompt changed from %q to %q", first, again)
	}
	ask("b")
	ask("a") // a is the most recent now: c pushes b out
	ask("c")
	if m.Len() != 2 {
		t.Errorf("%d sessions kept; want 2", m.Len())
	}
	if ask("a") != first {
		t.Error("the most recently used session was forgotten")
	}
	if got := ask("b"); got != "b #2 for m with []" || builds["b"] != 2 {
		t.Errorf("b after it was forgotten: %q, built %d times", got, builds["b"])
	}
	if _, err := m.Prompt(ctx, "bad", "m", nil); err == nil {
		t.Fatal("a failed build gave a prompt")
	}
	if _, err := m.Prompt(ctx, "bad", "m", nil); err == nil || builds["bad"] != 2 {
		t.Errorf("a failed build was kept: %v, built %d times", err, builds["bad"])
	}
}

// BenchmarkMemoManySessions measures the memo over a long-running
// server's life: many sessions, each asking at every step. kept-sessions
// is what it holds at the end, which the bound caps however many sessions
// ran.
func BenchmarkMemoManySessions(b *testing.B) {
	text := string(make([]byte, 4<<10))
	m := prompt.NewMemo(0, func(context.Context, string, string, []string) (string, error) { return text, nil })
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		m.Prompt(ctx, fmt.Sprint("ses_", i/8), "m", nil) // eight steps a session
	}
	b.ReportMetric(float64(m.Len()), "kept-sessions")
}
