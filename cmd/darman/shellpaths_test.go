package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestRunReadsHomeAsTheShellDoes: issue 32's finding 3. With every
// command and every directory outside allowed but a deny on ~/.ssh —
// written as the absolute home in one run, as ~/ in another, as $HOME/ in
// a third — no spelling of the key's path the shell reads as that file
// (~, $HOME, ${HOME}, "$HOME", $PWD/.. from the workspace in the home,
// $PWD after a cd, ~+, $OLDPWD) reaches it: the key is in no model
// request. The OS sandbox is off, so the permission checks alone decide.
func TestRunReadsHomeAsTheShellDoes(t *testing.T) {
	commands := []string{
		`cat ~/.ssh/id_rsa`,
		`cat $HOME/.ssh/id_rsa`,
		`cat ${HOME}/.ssh/id_rsa`,
		`cat "$HOME/.ssh/id_rsa"`,
		`cat "${HOME}"/.ssh/id_rsa`,
		`cat $PWD/../.ssh/id_rsa`,
		`cat ~+/../.ssh/id_rsa`,
		`cd .. && cat $PWD/.ssh/id_rsa`,
		`cd ~/.ssh && cd - >/dev/null && cat $OLDPWD/id_rsa`,
		`cat $OLDPWD/../.ssh/id_rsa`,
		`head -c 100 ~/.ssh/id_rsa`,
		`cp ~/.ssh/id_rsa k && cat k`,
	}
	for _, deny := range []string{"ABS/.ssh/**", "~/.ssh/**", "$HOME/.ssh/**"} {
		t.Run(deny, func(t *testing.T) {
			e := newEnv(t)
			os.MkdirAll(filepath.Join(e.home, ".ssh"), 0o700)
			os.WriteFile(filepath.Join(e.home, ".ssh", "id_rsa"), []byte(sshKey+"\n"), 0o600)
			var calls []llmtest.ToolCall
			for i, c := range commands {
				args, _ := json.Marshal(map[string]string{"command": c})
				calls = append(calls, llmtest.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "bash", Arguments: args})
			}
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{ToolCalls: calls}, {Text: "done"}}})
			home, _ := filepath.EvalSymlinks(e.home)
			pattern := strings.Replace(deny, "ABS", filepath.ToSlash(home), 1)
			rule, _ := json.Marshal(pattern)
			e.write(filepath.Join(e.home, ".config", "darman", "config.json"), fmt.Sprintf(`{
				"model": "anthropic/claude-sonnet-4-5",
				"provider": {"anthropic": {"baseURL": %q, "apiKey": "sk-ant-test-0123456789"}},
				"retry": {"maxAttempts": 2, "maxDelay": "10ms"},
				"sandbox": {"mode": "off"},
				"permission": {
					"bash": "allow",
					"external_directory": {"*": "allow", %s: "deny"},
					"read": {%s: "deny"}
				}
			}`, srv.URL, rule, rule))
			out, errs, code := e.run("run", "read the key")
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			results := toolResults(t, srv)
			if len(results) != len(commands) {
				t.Fatalf("%d tool results for %d commands", len(results), len(commands))
			}
			for i, c := range commands {
				res := results[fmt.Sprintf("c%d", i)]
				if strings.Contains(res, sshKey) {
					t.Errorf("%s read the key:\n%s", c, res)
				} else if !strings.Contains(res, "denied") {
					t.Errorf("%s was not denied:\n%s", c, res)
				}
			}
			for _, mc := range srv.ModelCalls() {
				if strings.Contains(string(mc.Body), sshKey) {
					t.Fatalf("the key reached the model")
				}
			}
		})
	}
}
