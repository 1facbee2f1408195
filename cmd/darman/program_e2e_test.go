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

// userConfig writes the user's own config.json: the model server, and
// rules (a JSON object's members) added to it.
func (e *env) userConfig(t *testing.T, srv *llmtest.Server, more string) {
	t.Helper()
	if more != "" {
		more = ",\n" + more
	}
	e.write(filepath.Join(e.home, ".config", "darman", "config.json"), fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "sk-ant-test-0123456789"}},
		"retry": {"maxAttempts": 2, "maxDelay": "10ms"}%s
	}`, srv.URL, more))
}

// TestRunDeniesAProgramHoweverSpelled: issue 32's finding 4. With every
// command allowed and rm denied, the model's rm through a path, a wrapper
// or another program that runs it deletes nothing; and an allow rule for
// ls does not run a file called ls in a workspace directory on PATH.
func TestRunDeniesAProgramHoweverSpelled(t *testing.T) {
	e := newEnv(t)
	commands := map[string]string{
		"b.txt": "/bin/rm b.txt",
		"c.txt": "/usr/bin/rm c.txt",
		"d.txt": "command rm d.txt",
		"e.txt": "env rm e.txt",
		"f.txt": "nice -n 5 rm f.txt",
		"g.txt": "timeout 5 /bin/rm g.txt",
		"h.txt": "echo h.txt | xargs rm",
		"i.txt": `find . -name i.txt -exec rm {} \;`,
		"j.txt": "busybox rm j.txt || /bin/rm j.txt",
		"k.txt": "ln -s /bin/rm zap && ./zap k.txt",
	}
	var calls []llmtest.ToolCall
	for f, c := range commands {
		e.write(f, "keep me")
		args, _ := json.Marshal(map[string]string{"command": c})
		calls = append(calls, llmtest.ToolCall{ID: f, Name: "bash", Arguments: args})
	}
	marker := filepath.Join(e.workspace, "shadow-ls-ran")
	e.write("bin/ls", "#!/bin/sh\ntouch "+marker+"\n")
	os.Chmod(filepath.Join(e.workspace, "bin", "ls"), 0o755)
	for i, v := range e.vars {
		if strings.HasPrefix(v, "PATH=") {
			e.vars[i] = "PATH=" + filepath.Join(e.workspace, "bin") + string(os.PathListSeparator) + v[len("PATH="):]
		}
	}
	calls = append(calls, llmtest.ToolCall{ID: "ls", Name: "bash", Arguments: json.RawMessage(`{"command":"ls -la"}`)})
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{ToolCalls: calls}, {Text: "done"}}})
	e.userConfig(t, srv, `"permission": {"bash": {"*": "allow", "rm *": "deny", "ls *": "allow"}}`)
	out, errs, code := e.run("run", "clean up")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	results := toolResults(t, srv)
	for f, c := range commands {
		if b, err := os.ReadFile(filepath.Join(e.workspace, f)); err != nil || string(b) != "keep me" {
			t.Errorf("%s: %s is gone (%v)", c, f, err)
		}
		if res := results[f]; !strings.Contains(res, `rule bash \"rm *\" deny`) && !strings.Contains(res, "external_directory") {
			t.Errorf("%s: not refused by the rm rule:\n%s", c, res)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("ls ran the workspace's bin/ls")
	}
	if res := results["ls"]; !strings.Contains(res, "permission denied") {
		t.Errorf("ls ran:\n%s", res)
	}
}
