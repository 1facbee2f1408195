package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// npmBin is the directory `make deps` installs the npm language servers
// into; a test that needs one of them skips when it is not there.
func npmBin(t *testing.T, bins ...string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", ".cache", "npm", "node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bins {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			t.Skipf("%s is not installed: run `make deps` (npm install --prefix .cache/npm pyright typescript-language-server typescript@6)", b)
		}
	}
	return dir
}

// prependPath puts dir first on the PATH darman runs with.
func (e *env) prependPath(dir string) {
	for i, v := range e.vars {
		if rest, ok := strings.CutPrefix(v, "PATH="); ok {
			e.vars[i] = "PATH=" + dir + string(os.PathListSeparator) + rest
		}
	}
}

// breakAndFix is an agent turn against a real language server: the model
// edits a file into a type error, asks the diagnostics tool, edits it back
// and answers. The broken edit's result must carry the server's error on
// wantLine, the tool must list it, and the fixing edit's result must be
// clean.
type breakAndFix struct {
	file, good, bad string
	// wantLine is the start of the error line the model must read, e.g.
	// "main.py: L2: ".
	wantLine string
	// wantMessage is a part of the server's message.
	wantMessage string
}

func (b breakAndFix) run(t *testing.T, e *env) {
	t.Helper()
	e.write(b.file, b.good)
	edit := func(from, to string) llmtest.ToolCall {
		args, _ := json.Marshal(map[string]string{"path": b.file, "oldString": from, "newString": to})
		return call("edit", string(args))
	}
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{edit(b.good, b.bad)}},
		{ToolCalls: []llmtest.ToolCall{call("diagnostics", `{"path":"`+b.file+`"}`)}},
		{ToolCalls: []llmtest.ToolCall{edit(b.bad, b.good)}},
		{Text: "Back to a clean build."},
	}})
	// A cold language server on a loaded machine can take longer than the
	// default wait to publish; the wait ends as soon as it does.
	e.configure(`"lsp": {"python": {"diagnosticsWait": "60s"}, "typescript": {"diagnosticsWait": "60s"}}`)
	out, errs, code := e.run("run", "--allow", "edit", "break it and fix it")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != 4 {
		t.Fatalf("%d model calls, want 4\nstderr: %s", len(calls), errs)
	}
	broken := lastToolResult(t, calls[1].Body)
	if !strings.Contains(broken, "LSP errors detected in this file, please fix:\n"+b.wantLine) || !strings.Contains(broken, b.wantMessage) {
		t.Fatalf("the broken edit's result lacks the error %q… %q:\n%s", b.wantLine, b.wantMessage, broken)
	}
	asked := lastToolResult(t, calls[2].Body)
	if !strings.Contains(asked, b.file+" has 1 problem(s):") || !strings.Contains(asked, b.wantMessage) {
		t.Fatalf("the diagnostics tool's answer:\n%s", asked)
	}
	if fixed := lastToolResult(t, calls[3].Body); strings.Contains(fixed, "LSP errors") {
		t.Fatalf("the fixing edit's result still reports errors:\n%s", fixed)
	}
}

// TestRunEditReportsPyrightErrors: the agent turn against pyright.
func TestRunEditReportsPyrightErrors(t *testing.T) {
	e := newEnv(t)
	e.prependPath(npmBin(t, "pyright-langserver"))
	e.write("pyproject.toml", "[project]\nname = \"calc\"\n")
	breakAndFix{
		file:        "calc.py",
		good:        "def add(a: int, b: int) -> int:\n    return a + b\n",
		bad:         "def add(a: int, b: int) -> str:\n    return a + b\n",
		wantLine:    "calc.py: L2: ",
		wantMessage: `is not assignable to return type "str"`,
	}.run(t, e)
}

// TestRunEditReportsTypeScriptErrors: the agent turn against
// typescript-language-server with TypeScript 6.
func TestRunEditReportsTypeScriptErrors(t *testing.T) {
	e := newEnv(t)
	e.prependPath(npmBin(t, "typescript-language-server", "tsc"))
	e.write("tsconfig.json", `{"compilerOptions": {"strict": true, "noEmit": true}}`)
	e.write("util.ts", "export function add(a: number, b: number): number {\n  return a + b;\n}\n")
	breakAndFix{
		file:        "main.ts",
		good:        "import { add } from \"./util\";\n\nexport const total: number = add(1, 2);\n",
		bad:         "import { add } from \"./util\";\n\nexport const total: string = add(1, 2);\n",
		wantLine:    "main.ts: L3: ",
		wantMessage: "Type 'number' is not assignable to type 'string'.",
	}.run(t, e)
}

// configure adds keys (a fragment of a JSON object) to the workspace's
// darman.json that withModel wrote.
func (e *env) configure(keys string) {
	e.t.Helper()
	path := filepath.Join(e.workspace, "darman.json")
	b, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	cfg, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "{")
	if !ok {
		e.t.Fatalf("darman.json is not an object:\n%s", b)
	}
	e.write("darman.json", "{"+keys+","+cfg)
}

// lastToolResult returns the text of the tool results in the last message
// of an Anthropic Messages request: what the model read after its last
// tool calls.
func lastToolResult(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		t.Fatalf("not a Messages request (%v):\n%s", err, body)
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &blocks)
	var out strings.Builder
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		var text string
		if json.Unmarshal(b.Content, &text) == nil {
			out.WriteString(text)
			continue
		}
		var parts []struct {
			Text string `json:"text"`
		}
		json.Unmarshal(b.Content, &parts)
		for _, p := range parts {
			out.WriteString(p.Text)
		}
	}
	if out.Len() == 0 {
		t.Fatalf("the last message holds no tool result:\n%s", body)
	}
	return out.String()
}

// TestDoctorChecksLanguageServers: plain doctor says which servers are
// installed without starting any; --check-lsp starts those of the
// workspace's languages and shows a running gopls, and a server that dies
// at start with its exit status and its last words, which fails doctor.
func TestDoctorChecksLanguageServers(t *testing.T) {
	e := newEnv(t)
	gopls := e.withGopls(t, true)
	broken := e.write(filepath.Join(e.home, "bin", "broken-ls"), "#!/bin/sh\necho 'broken-ls: no toolchain configured' >&2\nexit 7\n")
	os.Chmod(broken, 0o755)
	e.write("darman.json", `{"lsp": {"broken": {"command": ["`+broken+`"], "extensions": [".brk"]}}}`)
	e.write("go.mod", "module example.com/m\n\ngo 1.22\n")
	e.write("m.go", "package m\n")
	e.write("sub/x.brk", "x")
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-test-0123456789") // a model to talk to

	out := e.ok("doctor")
	for _, want := range []string{"✓ broken: " + broken + "\n", "✓ go: " + gopls + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}

	out, errs, code := e.run("doctor", "--check-lsp")
	if code != 1 {
		t.Fatalf("doctor --check-lsp with a broken server: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{
		"✓ go: running: gopls v",
		"✗ broken: failed: ",
		"the process exited with status 7",
		"broken-ls: no toolchain configured",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor --check-lsp lacks %q:\n%s", want, out)
		}
	}
	// A person reads doctor: what it found is in the report, not in log
	// records on stderr as well.
	if strings.Contains(errs, "level=") {
		t.Errorf("doctor --check-lsp wrote log records to stderr:\n%s", errs)
	}
	if line := lineWith(out, "python: "); strings.Contains(line, "running") {
		t.Errorf("python was started without a .py file in the workspace: %s", line)
	}

	out, _, _ = e.run("doctor", "--check-lsp", "--json")
	var r struct {
		LanguageServers []struct{ Name, State, Exit, Stderr string }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	states := map[string]string{}
	for _, s := range r.LanguageServers {
		states[s.Name] = s.State
		if s.Name == "broken" && (s.Exit != "exited with status 7" || !strings.Contains(s.Stderr, "no toolchain")) {
			t.Errorf("broken's JSON status = %+v; want its exit and stderr", s)
		}
	}
	if states["go"] != "running" || states["broken"] != "failed" || states["rust"] == "running" {
		t.Errorf("states = %v", states)
	}
	if left := processesIn(e.workspace); len(left) > 0 {
		t.Errorf("processes still running in the workspace after doctor: %v", left)
	}
}

func lineWith(s, part string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, part) {
			return l
		}
	}
	return ""
}

// processesIn lists the processes whose working directory is dir or
// below it (language servers run in their root).
func processesIn(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// TestRunSurvivesABrokenLanguageServer: a language server that dies at
// start is logged (with its exit status and last words) and marked failed;
// the edit goes through, the model is told nothing about it, and the turn
// ends normally.
func TestRunSurvivesABrokenLanguageServer(t *testing.T) {
	e := newEnv(t)
	broken := e.write(filepath.Join(e.home, "bin", "broken-ls"), "#!/bin/sh\necho 'broken-ls: no toolchain configured' >&2\nexit 7\n")
	os.Chmod(broken, 0o755)
	e.write("notes.brk", "old\n")
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"notes.brk","oldString":"old","newString":"new"}`)}},
		{Text: "Edited."},
	}})
	e.configure(`"lsp": {"broken": {"command": ["` + broken + `"], "extensions": [".brk"]}}`)
	out, errs, code := e.run("run", "--allow", "edit", "edit the notes")
	if code != 0 || out != "Edited.\n" {
		t.Fatalf("exit %d, stdout %q\nstderr: %s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(e.workspace, "notes.brk")); string(b) != "new\n" {
		t.Errorf("notes.brk = %q; the edit did not go through", b)
	}
	// Said once, as a warning line for a person (no raw log record).
	told := lineWith(errs, "language server broken failed to start")
	if !strings.HasPrefix(told, "! ") || !strings.Contains(told, "exited with status 7") || !strings.Contains(told, "broken-ls: no toolchain configured") || strings.Contains(errs, "level=") {
		t.Errorf("stderr does not report the failed server with its exit and stderr:\n%s", errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls", len(calls))
	}
	if res := lastToolResult(t, calls[1].Body); strings.Contains(res, "LSP") || strings.Contains(res, "broken") {
		t.Errorf("the model was told about the language server:\n%s", res)
	}
}
