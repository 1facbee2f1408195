package main_test

import (
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/config"
)

// TestRunRefusesUnknownPermissionNames: a misspelt permission, in the
// configuration or in --allow/--deny, stops darman before the model is
// asked anything, naming the permissions it could have meant; it used to
// be a rule that never matched (issue 32, finding 6).
func TestRunRefusesUnknownPermissionNames(t *testing.T) {
	const names = `"bash", "doom_loop", "edit"`
	t.Run("config", func(t *testing.T) {
		e := newEnv(t)
		srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "hello"}}})
		e.write(".darman/config.json", `{"permission": {"bsh": "allow"}}`)
		out, errs, code := e.run("run", "say hello")
		if code == 0 {
			t.Fatalf("exit 0 with permission.bsh\nstdout: %s\nstderr: %s", out, errs)
		}
		for _, want := range []string{".darman/config.json", "permission.bsh", `unknown permission "bsh" (did you mean "bash"?)`, names} {
			if !strings.Contains(errs, want) {
				t.Errorf("stderr lacks %q:\n%s", want, errs)
			}
		}
		if n := len(srv.ModelCalls()); n != 0 {
			t.Errorf("%d model calls with a broken configuration", n)
		}
	})
	for _, flag := range []string{"--allow", "--deny"} {
		t.Run(flag, func(t *testing.T) {
			e := newEnv(t)
			srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "hello"}}})
			out, errs, code := e.run("run", flag, "bsh:ls", "say hello")
			if code == 0 {
				t.Fatalf("exit 0 with %s bsh:ls\nstdout: %s\nstderr: %s", flag, out, errs)
			}
			for _, want := range []string{flag + ` "bsh:ls"`, `unknown permission "bsh" (did you mean "bash"?)`, names} {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errs)
				}
			}
			if n := len(srv.ModelCalls()); n != 0 {
				t.Errorf("%d model calls with a broken flag", n)
			}
		})
	}
}

// TestPermissionNamesCoverWhatIsAsked: every permission darman's checks
// and tools ask for is a name configuration accepts, so no rule for one
// is refused.
func TestPermissionNamesCoverWhatIsAsked(t *testing.T) {
	asked := []string{permission.Read, permission.Edit, permission.Write, permission.Glob, permission.Grep,
		permission.List, permission.Bash, permission.PowerShell, permission.ExternalDirectory, permission.DoomLoop,
		permission.MCP, permission.ProtectedPath, tool.SandboxEscape, "webfetch", "task", "skill", "todo", "lsp", "hook"}
	for _, r := range permission.Defaults() {
		asked = append(asked, r.Permission)
	}
	for _, name := range asked {
		if msg := config.CheckPermissionName(name); msg != "" {
			t.Errorf("%s: %s", name, msg)
		}
	}
}
