package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// The shell completes the values of --format, --agent and --model, and a
// session is named by the end of its ID (its beginning is its time, which
// the sessions of one day share).
func TestCompletionsAndShortSessionIDs(t *testing.T) {
	e := newEnv(t)
	e.userModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "One."}, {Text: "Two."}}}, "")
	e.write(".darman/agent/reviewer.md", "---\ndescription: Reviews the change\nmode: primary\n---\nReview.\n")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--format", ""}, []string{"text\n", "json\n"}},
		{[]string{"sessions", "export", "x", "--format", "m"}, []string{"markdown"}},
		{[]string{"run", "--agent", ""}, []string{"build\t", "plan\t", "reviewer\tReviews the change"}},
		{[]string{"run", "--model", "anthropic/claude-sonnet-4-"}, []string{"anthropic/claude-sonnet-4-5\tClaude Sonnet 4.5"}},
	} {
		out := e.ok(append([]string{"__complete"}, c.args...)...)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("darman __complete %s lacks %q:\n%s", strings.Join(c.args, " "), w, out)
			}
		}
	}

	e.ok("run", "first")
	e.ok("run", "second")
	var sessions []struct{ ID string }
	if err := json.Unmarshal([]byte(e.ok("sessions", "list", "--json")), &sessions); err != nil || len(sessions) != 2 {
		t.Fatalf("sessions list: %v, %d sessions", err, len(sessions))
	}
	for _, s := range sessions {
		id := s.ID
		end := strings.ToLower(id[len(id)-6:])
		if out := e.ok("sessions", "show", end); !strings.HasPrefix(out, id) {
			t.Errorf("sessions show %s (the end of %s) showed:\n%s", end, id, out)
		}
	}
	shared := strings.ToLower(strings.TrimPrefix(sessions[0].ID, "ses_")[:4])
	if _, errs, code := e.run("sessions", "show", shared); code == 0 || !strings.Contains(errs, "several sessions") || !strings.Contains(errs, "last characters") {
		t.Errorf("sessions show %s (a shared beginning): exit %d\n%s", shared, code, errs)
	}
}
