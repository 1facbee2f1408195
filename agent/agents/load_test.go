package agents_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/internal/config"
)

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dirs is a workspace (a git root) and a home with its user config dir.
func dirs(t testing.TB) prompt.Dirs {
	t.Helper()
	base := t.TempDir()
	d := prompt.Dirs{Root: filepath.Join(base, "ws"), Home: filepath.Join(base, "home")}
	d.User = filepath.Join(d.Home, ".config", "darman")
	if err := os.MkdirAll(filepath.Join(d.Root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestClaudeCodeFile(t *testing.T) {
	d := dirs(t)
	src, err := os.ReadFile("testdata/reviewer.md")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d.Root, ".claude", "agents", "reviewer.md"), string(src)+"")
	var logs bytes.Buffer
	c := agents.Load(agents.Options{Dirs: d, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if p := c.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	a, ok := c.Get("code-reviewer")
	if !ok {
		t.Fatalf("code-reviewer not found in %v", c.Names(nil))
	}
	if !strings.HasPrefix(a.Description, "Expert code review specialist.") || a.Model != "" || a.Source != "claude" || a.Mode != agents.Subagent {
		t.Errorf("agent = %+v", a)
	}
	if want := []string{"read", "grep", "glob", "bash", "bash_output", "bash_kill"}; !slices.Equal(a.Tools, want) {
		t.Errorf("tools = %v, want %v", a.Tools, want)
	}
	if !a.Allows("grep") || a.Allows("edit") || a.Allows("write") {
		t.Errorf("allow list not as written: %v", a.Tools)
	}
	if !strings.HasPrefix(a.Prompt, "You are a senior code reviewer") {
		t.Errorf("prompt = %q", a.Prompt)
	}
	if got := c.Names(nil); !slices.Equal(got, []string{"build", "plan", "code-reviewer"}) {
		t.Errorf("names = %v", got)
	}
}

func TestPrecedence(t *testing.T) {
	d := dirs(t)
	def := func(desc string) string { return "---\ndescription: " + desc + "\n---\nbody\n" }
	write(t, filepath.Join(d.Home, ".claude", "agents", "a.md"), def("claude user"))
	write(t, filepath.Join(d.Root, ".claude", "agents", "a.md"), def("claude project"))
	write(t, filepath.Join(d.User, "agent", "a.md"), def("darman user"))
	write(t, filepath.Join(d.Home, ".claude", "agents", "b.md"), def("claude user"))
	write(t, filepath.Join(d.Root, ".claude", "agents", "b.md"), def("claude project"))
	write(t, filepath.Join(d.Home, ".claude", "agents", "c.md"), def("claude user"))
	write(t, filepath.Join(d.User, "agent", "d.md"), def("darman user"))
	write(t, filepath.Join(d.Root, ".darman", "agent", "d.md"), def("darman project"))
	c := agents.Load(agents.Options{Dirs: d})
	for name, want := range map[string]string{"a": "darman user", "b": "claude project", "c": "claude user", "d": "darman project"} {
		a, _ := c.Get(name)
		if a.Description != want {
			t.Errorf("%s: %q, want %q", name, a.Description, want)
		}
	}
	if a, _ := c.Get("a"); len(a.Shadowed) != 2 {
		t.Errorf("a shadows %v, want both Claude files", a.Shadowed)
	}
}

func TestYAMLListsAndDarmanKeys(t *testing.T) {
	d := dirs(t)
	write(t, filepath.Join(d.Root, ".darman", "agent", "tester.md"), `---
description: Runs the tests
mode: primary
tools:
  - Read
  - bash
model: anthropic/claude-haiku-4-5
temperature: 0.2
maxSteps: 7
color: green
permission:
  edit: deny
  bash:
    "*": ask
    "go test *": allow
---
Run the tests.
`)
	var logs bytes.Buffer
	c := agents.Load(agents.Options{Dirs: d, Trusted: true, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	a, ok := c.Get("tester")
	if !ok {
		t.Fatalf("not loaded: %v", c.Problems())
	}
	if a.Mode != agents.Primary || a.Model != "anthropic/claude-haiku-4-5" || a.MaxSteps != 7 || a.Temperature == nil || *a.Temperature != 0.2 {
		t.Errorf("agent = %+v", a)
	}
	want := []permission.Rule{{Permission: "edit", Pattern: "*", Action: "deny"}, {Permission: "bash", Pattern: "*", Action: "ask"},
		{Permission: "bash", Pattern: "go test *", Action: "allow"}}
	if !slices.Equal(a.Permission, want) {
		t.Errorf("permission = %v, want %v", a.Permission, want)
	}
	if !strings.Contains(logs.String(), "key=color") {
		t.Errorf("the unknown key is not logged: %s", logs.String())
	}
}

func TestBadFilesAreProblems(t *testing.T) {
	d := dirs(t)
	write(t, filepath.Join(d.Root, ".darman", "agent", "nodesc.md"), "---\nname: x\n---\n")
	write(t, filepath.Join(d.Root, ".darman", "agent", "open.md"), "---\ndescription: y\n")
	write(t, filepath.Join(d.Root, ".darman", "agent", "mode.md"), "---\ndescription: y\nmode: boss\n---\n")
	c := agents.Load(agents.Options{Dirs: d})
	if got := c.Names(nil); !slices.Equal(got, []string{"build", "plan"}) {
		t.Errorf("names = %v", got)
	}
	if p := c.Problems(); len(p) != 3 {
		t.Errorf("problems = %v", p)
	}
}

func TestPlanStaysLocked(t *testing.T) {
	d := dirs(t)
	write(t, filepath.Join(d.Root, ".darman", "agent", "plan.md"), "---\ndescription: my plan\npermission:\n  edit: allow\n---\n")
	c := agents.Load(agents.Options{Dirs: d, Trusted: true, Config: config.Agents{"plan": {Permission: config.Rules{{Permission: "edit", Pattern: "*", Action: "allow"}}}}})
	a, _ := c.Get("plan")
	if a.Allows("edit") || a.Allows("write") || a.Allows("apply_patch") {
		t.Errorf("plan allows edit tools")
	}
	rules := append(permission.Defaults(), permission.Rule{Permission: "edit", Pattern: "*", Action: "allow"})
	rules = append(rules, a.Rules()...)
	if got := permission.Evaluate(rules, "edit", "main.go"); got != permission.Deny {
		t.Errorf("edit under plan: %s, want deny", got)
	}
	if got := permission.Evaluate(rules, "bash", "rm -rf x"); got != permission.Deny {
		t.Errorf("rm under plan: %s, want deny", got)
	}
	if got := permission.Evaluate(rules, "bash", "git diff HEAD"); got != permission.Allow {
		t.Errorf("git diff under plan: %s, want allow", got)
	}
}

func TestConfigAgentsAndRefresh(t *testing.T) {
	d := dirs(t)
	c := agents.Load(agents.Options{Dirs: d, Config: config.Agents{"docs": {Description: "writes docs", Mode: "subagent", Tools: []string{"Read", "Write"}},
		"build": {Disable: false, Description: "mine"}}})
	if a, ok := c.Get("docs"); !ok || a.Mode != agents.Subagent || !slices.Equal(a.Tools, []string{"read", "write"}) {
		t.Errorf("docs = %+v", a)
	}
	if a, _ := c.Get("build"); a.Description != "mine" || a.Source != "config" {
		t.Errorf("build = %+v", a)
	}
	if c.Refresh() {
		t.Error("Refresh reported a change with no file changed")
	}
	write(t, filepath.Join(d.Root, ".darman", "agent", "new.md"), "---\ndescription: new\n---\n")
	if !c.Refresh() {
		t.Error("Refresh did not see the new file")
	}
	if _, ok := c.Get("new"); !ok {
		t.Error("new agent not listed after Refresh")
	}
}

// An untrusted workspace's agent files narrow only: their allow rules are
// left out, a file named after a built-in agent does not replace it; a
// trusted one's apply, but no agent file allows sandbox_escape or
// protected_path, and a replaced build still runs sessions.
func TestWorkspaceAgentFilesFollowTrust(t *testing.T) {
	d := dirs(t)
	write(t, filepath.Join(d.Root, ".claude", "agents", "build.md"), "---\ndescription: mine\nmode: subagent\npermission:\n  \"*\": allow\n---\nbody\n")
	write(t, filepath.Join(d.Root, ".darman", "agent", "helper.md"),
		"---\ndescription: helps\npermission:\n  edit: deny\n  bash: allow\n  sandbox_escape: allow\n  protected_path: allow\n---\n")
	write(t, filepath.Join(d.User, "agent", "mine.md"), "---\ndescription: the user's\npermission:\n  bash: allow\n---\n")

	c := agents.Load(agents.Options{Dirs: d})
	if b, _ := c.Get("build"); b.Source != "builtin" {
		t.Errorf("untrusted: build = %+v, want the built-in one", b)
	}
	h, _ := c.Get("helper")
	if want := []permission.Rule{{Permission: "edit", Pattern: "*", Action: "deny"}}; !slices.Equal(h.Permission, want) {
		t.Errorf("untrusted: helper's rules = %v, want %v", h.Permission, want)
	}
	if m, _ := c.Get("mine"); len(m.Permission) != 1 {
		t.Errorf("the user's own agent lost its rules: %v", m.Permission)
	}
	var keys []string
	for _, it := range c.Widening() {
		keys = append(keys, it.Source+" "+it.Key+" = "+it.Value)
	}
	want := []string{".claude/agents/build.md agent build = replaces darman's built-in build agent", `.darman/agent/helper.md agent helper permission = bash "*" allow`}
	if !slices.Equal(keys, want) {
		t.Errorf("widening = %q, want %q", keys, want)
	}

	c = agents.Load(agents.Options{Dirs: d, Trusted: true})
	b, _ := c.Get("build")
	if b.Path == "" || !b.Runs() {
		t.Errorf("trusted: build = %+v, want the file's, still running sessions", b)
	}
	h, _ = c.Get("helper")
	if want := []permission.Rule{{Permission: "edit", Pattern: "*", Action: "deny"}, {Permission: "bash", Pattern: "*", Action: "allow"}}; !slices.Equal(h.Permission, want) {
		t.Errorf("trusted: helper's rules = %v, want %v (never sandbox_escape, protected_path)", h.Permission, want)
	}
}

// A tools name of the configuration's agents entry that is no tool is a
// problem naming the entry and darman's tools; an MCP tool of a
// configured server is a tool.
func TestConfigAgentWithAnUnknownToolIsAProblem(t *testing.T) {
	c := agents.Load(agents.Options{Dirs: dirs(t), MCPServers: []string{"db"}, Config: config.Agents{
		"docs":  {Description: "writes docs", Tools: []string{"Read", "writ"}},
		"query": {Description: "queries", Tools: []string{"read", "db_query", "mcp__db__schema"}},
	}})
	if _, ok := c.Get("docs"); ok {
		t.Error("docs, with an unknown tool, was loaded")
	}
	p, ok := c.ProblemOf("docs")
	if !ok || p.Path != "config agents.docs" || !strings.Contains(p.Err.Error(), `unknown tool "writ" (did you mean "write"?)`) || !strings.Contains(p.Err.Error(), `"webfetch"`) {
		t.Errorf("the problem: %v %v", p, ok)
	}
	if a, ok := c.Get("query"); !ok || !slices.Equal(a.Tools, []string{"read", "db_query", "db_schema"}) {
		t.Errorf("query = %+v, %v (problems %v)", a, ok, c.Problems())
	}
}
