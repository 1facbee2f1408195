package main_test

import (
	"strings"
	"testing"
)

// The completion command is there for every command line that can reach
// it, though `darman version` and the others no longer build it.
func TestCompletionCommandWhereReachable(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"help"}, {"--help"}, {}} {
		if out, _, _ := e.run(args...); !strings.Contains(out, "completion  ") {
			t.Errorf("darman %s does not list the completion command:\n%s", strings.Join(args, " "), out)
		}
	}
	if out := e.ok("help", "completion"); !strings.Contains(out, "Generate the autocompletion script for darman") {
		t.Errorf("darman help completion:\n%s", out)
	}
	if out := e.ok("completion", "zsh"); !strings.Contains(out, "#compdef darman") {
		t.Errorf("darman completion zsh:\n%.200s", out)
	}
	if out := e.ok("__complete", "comp"); !strings.HasPrefix(out, "completion\t") {
		t.Errorf("darman __complete comp:\n%s", out)
	}
	if out := e.ok("__complete", "vers"); !strings.HasPrefix(out, "version\t") {
		t.Errorf("darman __complete vers:\n%s", out)
	}
}
