package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/internal/testenv"
)

// withoutGo gives darman a PATH with gopls and a directory (returned) that
// has no go command yet, and none of the directories that hold one: the
// machine of issue 21, where gopls runs but cannot load the module.
func (e *env) withoutGo(t *testing.T) (later, goBin string) {
	t.Helper()
	gopls := testenv.Gopls(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	later = filepath.Join(e.home, "later-bin")
	os.MkdirAll(later, 0o755)
	dirs := []string{filepath.Dir(gopls), later}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go")); err != nil && d != "" {
			dirs = append(dirs, d)
		}
	}
	for i, v := range e.vars {
		if strings.HasPrefix(v, "PATH=") {
			e.vars[i] = "PATH=" + strings.Join(dirs, string(os.PathListSeparator))
		}
	}
	e.vars = append(e.vars, testenv.GoCaches(t)...)
	testenv.TelemetryOff(t, e.home)
	return later, goBin
}

// greetModule writes testenv.GoModule in the workspace.
func (e *env) greetModule() { testenv.GoModule(e.t, e.workspace) }

// TestMCPWhenGoplsCannotFindGo: through the real binary, with gopls on
// PATH but not go, lookup_symbol, find_references, diagnostics and
// check_source answer MCP-LANGUAGE-SERVER-UNAVAILABLE quoting gopls and
// saying what to do, never "nothing found"; once go is on that PATH, the
// same darman mcp answers them.
func TestMCPWhenGoplsCannotFindGo(t *testing.T) {
	e := newEnv(t)
	later, goBin := e.withoutGo(t)
	e.greetModule()
	cs, ctx, stderr := connectMCP(t, e, e.workspace)
	callTool := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v; stderr: %s", name, err, stderr.String())
		}
		return toolText(res), res.IsError
	}
	calls := []struct {
		name string
		args map[string]any
		ok   string // in the text once go is back
	}{
		{"lookup_symbol", map[string]any{"query": "Greet"}, "a/a.go:4:6"},
		{"find_references", map[string]any{"symbol": "a.Greet"}, "1 reference(s):"},
		{"diagnostics", map[string]any{}, "2 files checked: no problems"},
		{"check_source", map[string]any{"path": "a/a.go", "source": "package a\n\nfunc Greet() int { return \"x\" }\n"}, "a/a.go: 1 error"},
	}
	const want = "MCP-LANGUAGE-SERVER-UNAVAILABLE: gopls cannot find the `go` command: put Go on PATH for darman mcp's environment (gopls said: \""
	for _, c := range calls {
		text, isErr := callTool(c.name, c.args)
		if !isErr || !strings.HasPrefix(text, want) || !strings.Contains(text, "go command required, not found") {
			t.Errorf("%s without go = %q (isError %v); want it to start with %q and quote gopls", c.name, text, isErr, want)
		}
	}

	if err := os.Symlink(goBin, filepath.Join(later, "go")); err != nil {
		t.Fatal(err)
	}
	// The next call after the backoff starts gopls again, which now loads
	// the module.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		text, isErr := callTool("lookup_symbol", map[string]any{"query": "Greet"})
		if !isErr && strings.Contains(text, "a/a.go:4:6") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with go on PATH, lookup_symbol still = %q; stderr: %s", text, stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, c := range calls {
		if text, isErr := callTool(c.name, c.args); isErr || !strings.Contains(text, c.ok) {
			t.Errorf("%s with go on PATH = %q (isError %v); want %q", c.name, text, isErr, c.ok)
		}
	}
}

// TestDoctorReportsALoadFailure: doctor --check-lsp starts gopls, which
// runs but cannot load the module without go: doctor fails, naming the
// cause and quoting gopls.
func TestDoctorReportsALoadFailure(t *testing.T) {
	e := newEnv(t)
	e.withoutGo(t)
	e.greetModule()
	out, errs, code := e.run("doctor", "--check-lsp")
	if code != 1 {
		t.Fatalf("doctor --check-lsp without go: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	line := lineWith(out, "go: ")
	for _, want := range []string{"✗ go: running but cannot load the workspace: gopls cannot find the `go` command: put Go on PATH for darman's environment", "go command required, not found"} {
		if !strings.Contains(line, want) {
			t.Errorf("doctor's go line lacks %q:\n%s", want, out)
		}
	}
	if left := processesIn(e.workspace); len(left) > 0 {
		t.Errorf("processes still running in the workspace after doctor: %v", left)
	}
}

// TestRunDiagnosticsToolSaysTheServerCannotLoad: in an agent turn with
// gopls unable to load the module, an edit's result stays silent about
// it (the editor's business), but the diagnostics tool says why nothing
// is known instead of "no problems".
func TestRunDiagnosticsToolSaysTheServerCannotLoad(t *testing.T) {
	e := newEnv(t)
	e.withoutGo(t)
	e.greetModule()
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"a/a.go","oldString":"return \"hello \" + name","newString":"return 1"}`)}},
		{ToolCalls: []llmtest.ToolCall{call("diagnostics", `{"path":"a/a.go"}`)}},
		{Text: "Done."},
	}})
	out, errs, code := e.run("run", "--allow", "edit", "break it")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3\nstderr: %s", len(calls), errs)
	}
	if edited := lastToolResult(t, calls[1].Body); strings.Contains(edited, "LSP") || strings.Contains(edited, "gopls") {
		t.Errorf("the edit's result tells the model about the language server:\n%s", edited)
	}
	asked := lastToolResult(t, calls[2].Body)
	want := "Cannot get diagnostics for a/a.go, so nothing is known about its problems: gopls cannot find the `go` command: put Go on PATH for darman's environment (gopls said: \""
	if !strings.Contains(asked, want) || strings.Contains(asked, "No problems") {
		t.Errorf("the diagnostics tool's answer:\n%s\nwant it to contain %q", asked, want)
	}
}
