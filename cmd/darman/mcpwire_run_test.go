package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// The model reads a file through @modelcontextprotocol/server-filesystem:
// refused while the user has not allowed it, read once they have.
func TestRunReadsAFileThroughServerFilesystem(t *testing.T) {
	bin, _ := filepath.Abs("../../.cache/npm/node_modules/.bin/mcp-server-filesystem")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("the MCP filesystem server is not installed: run `make deps`")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: run `make deps`")
	}
	e := newEnv(t)
	e.write("notes.txt", "the secret word is tangerine\n")
	root, _ := filepath.EvalSymlinks(e.workspace)
	script := llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("filesystem_read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "notes.txt")))}},
		{Text: "Done."},
	}}
	srv := e.withModel(t, script)
	cfg, _ := os.ReadFile(filepath.Join(e.workspace, "darman.json"))
	withMCP := strings.Replace(string(cfg), `"model":`, fmt.Sprintf(`"mcpServers": {"filesystem": {"command": %q, "args": [%q]}}, "model":`, bin, root), 1)
	e.write("darman.json", withMCP)
	e.vars = append(e.vars, "PATH="+os.Getenv("PATH"))

	out, errs, code := e.run("run", "read my notes")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != 2 || !strings.Contains(string(calls[0].Body), `"name":"filesystem_read_text_file"`) {
		t.Fatalf("the filesystem tools were not offered:\n%.2000s", calls[0].Body)
	}
	if strings.Contains(string(calls[1].Body), "tangerine") {
		t.Fatalf("the file was read without the user's permission:\n%s", calls[1].Body)
	}

	srv2 := e.withModel(t, script)
	e.write("darman.json", strings.Replace(withMCP, srv.URL, srv2.URL, -1))
	out, errs, code = e.run("run", "--allow", "mcp:filesystem_read_text_file", "read my notes")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	calls = srv2.ModelCalls()
	if len(calls) != 2 || !strings.Contains(string(calls[1].Body), "tangerine") {
		t.Fatalf("the allowed read did not come back:\n%s", calls[len(calls)-1].Body)
	}
}
