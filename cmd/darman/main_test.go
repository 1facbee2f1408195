package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/internal/sandbox"
	"github.com/darman-dev/darman/internal/testenv"
)

// The tests run the real binary, built once, as a user would: in a fresh
// home, with a workspace directory of their own.

var darmanBin string

func TestMain(m *testing.M) {
	// The in-process tests' sandbox re-executes this binary as its helper.
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		os.Exit(sandbox.Exec(os.Args[2:], os.Stderr))
	}
	dir, err := os.MkdirTemp("", "darman-bin-")
	if err != nil {
		panic(err)
	}
	darmanBin = filepath.Join(dir, "darman")
	if bin := os.Getenv("DARMAN_TEST_BIN"); bin != "" {
		// A binary built elsewhere (an earlier commit's, a release build),
		// to compare the start-up benchmarks in one run.
		darmanBin = bin
	} else {
		build := exec.Command("go", "build", "-o", darmanBin, ".")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			panic("building darman: " + err.Error())
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is a user's machine: a home with XDG directories and a workspace.
type env struct {
	t         *testing.T
	home      string
	workspace string
	vars      []string
	// prepare, when set, changes the darman command run is about to
	// start (a terminal of its own, say).
	prepare func(*exec.Cmd)
}

func newEnv(t *testing.T) *env {
	home := testenv.TempDir(t)
	ws := filepath.Join(home, "project")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	e := &env{t: t, home: home, workspace: ws}
	e.vars = []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
	}
	// The tests' workspaces are their author's: this user trusts every
	// folder in the home (a record, as darman trust ~ makes). The trust
	// tests take it away (distrust).
	real, err := filepath.EvalSymlinks(home)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(map[string]any{"folders": []map[string]string{{"path": real, "answer": "trusted", "at": "2026-12-01T00:00:00Z"}}})
	e.write(e.trustFile(), string(rec))
	return e
}

// trustFile is the user's trust records.
func (e *env) trustFile() string { return filepath.Join(e.home, ".config", "darman", "trust.json") }

// distrust removes the user's trust records: no folder is trusted.
func (e *env) distrust() {
	if err := os.Remove(e.trustFile()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) dataDir() string { return filepath.Join(e.home, ".local", "share", "darman") }

func (e *env) write(rel, content string) string {
	p := filepath.Join(e.workspace, rel)
	if filepath.IsAbs(rel) {
		p = rel
	}
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// run runs darman in the workspace and returns stdout, stderr and the exit
// code.
func (e *env) run(args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(darmanBin, args...)
	cmd.Dir = e.workspace
	cmd.Env = e.vars
	cmd.SysProcAttr = noTerminal()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if e.prepare != nil {
		e.prepare(cmd)
	}
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (e *env) ok(args ...string) string {
	e.t.Helper()
	out, errs, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("darman %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func TestVersion(t *testing.T) {
	e := newEnv(t)
	var v struct{ Version, Go, Platform string }
	if err := json.Unmarshal([]byte(e.ok("version", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Version == "" || v.Go != runtime.Version() || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("version --json = %+v", v)
	}
	if out := e.ok("version"); !strings.HasPrefix(out, "darman "+v.Version+" (commit ") {
		t.Fatalf("version = %q", out)
	}
}

func TestHelpEverywhere(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"--help"}, {"version", "--help"}, {"doctor", "--help"}, {"sessions", "--help"},
		{"sessions", "list", "--help"}, {"sessions", "show", "--help"}, {"sessions", "export", "--help"},
		{"sessions", "import", "--help"}, {"sessions", "rm", "--help"}, {"config", "show", "--help"},
		{"completion", "bash"},
	} {
		out := e.ok(args...)
		if len(out) < 100 {
			t.Errorf("darman %s printed only %q", strings.Join(args, " "), out)
		}
	}
	out, errs, code := e.run("no-such-command")
	if code == 0 || !strings.Contains(errs, `unknown command "no-such-command"`) {
		t.Errorf("unknown command: exit %d, %q %q", code, out, errs)
	}
}

func TestDoctorHealthy(t *testing.T) {
	e := newEnv(t)
	e.write(filepath.Join(e.home, ".config", "darman", "config.json"), `{
		// the user's own settings
		"model": "anthropic/claude-sonnet-4-5",
	}`)
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-test-0123456789")
	out := e.ok("doctor")
	for _, want := range []string{
		"✓ " + filepath.Join(e.home, ".config", "darman", "config.json"),
		"· " + filepath.Join(e.workspace, "darman.json"),
		"✓ " + e.dataDir() + ": 0 sessions",
		"schema 2, this process",
		"language servers",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	var r struct {
		Checks []struct{ Section, Name, Status, Detail string }
	}
	if err := json.Unmarshal([]byte(e.ok("doctor", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	var langs []string
	for _, c := range r.Checks {
		if c.Section == "language servers" {
			langs = append(langs, c.Name)
		}
	}
	if !reflect.DeepEqual(langs, []string{"c", "go", "python", "rust", "typescript"}) {
		t.Errorf("language servers checked: %v", langs)
	}
}

func TestDoctorFailsOnBadConfig(t *testing.T) {
	e := newEnv(t)
	e.write("darman.json", `{"permission": {"bash": {"git *": "yes"}}}`)
	out, _, code := e.run("doctor")
	want := `darman.json: permission.bash["git *"]: expected "allow", "ask" or "deny", got "yes"`
	if code != 1 || !strings.Contains(out, want) {
		t.Fatalf("doctor with a bad config: exit %d, output:\n%s\nwant it to contain %s", code, out, want)
	}
	_, errs, code := e.run("sessions", "list")
	if code != 1 || !strings.Contains(errs, want) {
		t.Fatalf("sessions list with a bad config: exit %d, %s", code, errs)
	}
	e.write("darman.json", "{\n  \"model\": \"a/b\",\n  oops\n}")
	_, errs, code = e.run("config", "show")
	if code != 1 || !strings.Contains(errs, "darman.json:3:") {
		t.Fatalf("a syntax error: exit %d, %s", code, errs)
	}
}

func TestDoctorFailsOnBrokenStore(t *testing.T) {
	e := newEnv(t)
	os.MkdirAll(filepath.Dir(e.dataDir()), 0o755)
	e.write(e.dataDir(), "a file where the data directory should be")
	out, _, code := e.run("doctor")
	if code != 1 || !strings.Contains(out, "✗ session store") {
		t.Fatalf("doctor with a broken data dir: exit %d\n%s", code, out)
	}
}

// exportFixture is a finished exchange followed by an interrupted one.
func exportFixture(workspace string) store.Export {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	s := agent.Session{ID: agent.NewSessionID(), Workspace: workspace, Title: "Fix the flaky test",
		Model: "anthropic/claude-sonnet-4-5", Created: at, Updated: at.Add(time.Minute), Messages: 3}
	msg := func(role agent.Role, finish agent.Finish, parts ...agent.Part) agent.MessageWithParts {
		m := agent.Message{ID: agent.NewMessageID(), SessionID: s.ID, Role: role, Created: at, Finish: finish}
		for i := range parts {
			parts[i].ID, parts[i].MessageID, parts[i].SessionID = agent.NewPartID(), m.ID, s.ID
		}
		return agent.MessageWithParts{Message: m, Parts: parts}
	}
	return store.Export{Version: store.ExportVersion, Session: s, Messages: []agent.MessageWithParts{
		msg(agent.RoleUser, "", agent.Part{Kind: agent.PartText, Text: "Why does TestFoo fail?"}),
		msg(agent.RoleAssistant, agent.FinishStop,
			agent.Part{Kind: agent.PartTool, Tool: &agent.ToolCall{CallID: "c1", Name: "read", Status: agent.ToolCompleted,
				Title: "foo_test.go", Input: json.RawMessage(`{"path":"foo_test.go"}`), Output: "package foo"}},
			agent.Part{Kind: agent.PartText, Text: "It depends on map order."}),
		msg(agent.RoleAssistant, "", agent.Part{Kind: agent.PartText, Text: "Let me fix"}),
	}}
}

func TestSessionsLifecycle(t *testing.T) {
	e := newEnv(t)
	fixture := exportFixture(e.workspace)
	b, _ := json.Marshal(fixture)
	file := e.write("export.json", string(b))

	if out := e.ok("sessions", "import", file); !strings.Contains(out, "imported "+string(fixture.Session.ID)) {
		t.Fatalf("import: %s", out)
	}
	list := e.ok("sessions", "list")
	for _, want := range []string{string(fixture.Session.ID), "Fix the flaky test", e.workspace, "  3  "} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}
	short := strings.ToLower(string(fixture.Session.ID)[4:16])
	show := e.ok("sessions", "show", short)
	for _, want := range []string{"Why does TestFoo fail?", "⚙ read foo_test.go", "It depends on map order.", "[interrupted"} {
		if !strings.Contains(show, want) {
			t.Errorf("show lacks %q:\n%s", want, show)
		}
	}
	var back store.Export
	if err := json.Unmarshal([]byte(e.ok("sessions", "export", short)), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, fixture) {
		t.Errorf("export after import is not what was imported:\n got %+v\nwant %+v", back, fixture)
	}
	md := filepath.Join(e.workspace, "out.md")
	e.ok("sessions", "export", "--format", "markdown", "-o", md, short)
	mdText, _ := os.ReadFile(md)
	if !strings.HasPrefix(string(mdText), "# Fix the flaky test\n") || !strings.Contains(string(mdText), "It depends on map order.") {
		t.Errorf("markdown export:\n%s", mdText)
	}
	if _, errs, code := e.run("sessions", "import", file); code != 1 || !strings.Contains(errs, "already exists") {
		t.Errorf("importing twice: exit %d, %s", code, errs)
	}
	// What the MCP client kept of the session goes with it.
	mcpRecord := e.write(filepath.Join(e.dataDir(), "mcp", "sessions", string(fixture.Session.ID)+".json"), "[]")
	mcpImage := e.write(filepath.Join(e.dataDir(), "mcp", "files", string(fixture.Session.ID), "shot.png"), "png")
	if out := e.ok("sessions", "rm", short); !strings.Contains(out, "removed "+string(fixture.Session.ID)) {
		t.Errorf("rm: %s", out)
	}
	for _, p := range []string{mcpRecord, filepath.Dir(mcpImage)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there after rm (%v)", p, err)
		}
	}
	if out := e.ok("sessions", "list", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("list after rm: %s", out)
	}
	if _, errs, code := e.run("sessions", "show", short); code != 1 || !strings.Contains(errs, "no session matches") {
		t.Errorf("show after rm: exit %d, %s", code, errs)
	}
	garbage := e.write("garbage.json", `{"session": 12}`)
	if _, errs, code := e.run("sessions", "import", garbage); code != 1 || !strings.Contains(errs, "is not a darman session export") {
		t.Errorf("import of garbage: exit %d, %s", code, errs)
	}
}

// TestSessionsListWhileAnotherProcessOwnsTheStore is a shell command run
// while an editor's darman holds the store.
func TestSessionsListWhileAnotherProcessOwnsTheStore(t *testing.T) {
	e := newEnv(t)
	s, err := store.Open(context.Background(), e.dataDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fixture := exportFixture(e.workspace)
	if err := s.Import(context.Background(), &fixture); err != nil {
		t.Fatal(err)
	}
	list := e.ok("sessions", "list", "--here")
	if !strings.Contains(list, string(fixture.Session.ID)) {
		t.Fatalf("list while another process owns the store:\n%s", list)
	}
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-test-0123456789") // a model to talk to
	out := e.ok("doctor")
	if !strings.Contains(out, "1 sessions") || !strings.Contains(out, "served by darman process") {
		t.Fatalf("doctor as a client:\n%s", out)
	}
	e.ok("sessions", "rm", string(fixture.Session.ID))
	if _, err := s.Session(context.Background(), fixture.Session.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the owner still has the session removed by the client: %v", err)
	}
}

// TestLogsNeverReachStdout: with debug logging on, stdout still carries only
// the command's output (it carries the protocol in lsp mode), and the log
// file gets the lines.
func TestLogsNeverReachStdout(t *testing.T) {
	e := newEnv(t)
	logFile := filepath.Join(e.home, "darman.log")
	out := e.ok("--log-level", "debug", "--log-file", logFile, "sessions", "list", "--json")
	if strings.TrimSpace(out) != "[]" {
		t.Fatalf("stdout with debug logging: %q", out)
	}
	logged, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(logged), "level=DEBUG") {
		t.Fatalf("log file: %v\n%s", err, logged)
	}
	_, errs, _ := e.run("--log-level", "debug", "sessions", "list")
	if !strings.Contains(errs, "level=DEBUG") {
		t.Fatalf("debug lines without --log-file should go to stderr:\n%s", errs)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// requireSandbox skips when this kernel has no Landlock, saying why.
func requireSandbox(t *testing.T) {
	t.Helper()
	sb := sandbox.New(sandbox.Options{Helper: darmanBin})
	defer sb.Close()
	if st := sb.Status(); !st.Active() {
		t.Skipf("no OS sandbox here: %s", st.Reason)
	}
}
