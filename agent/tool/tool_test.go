package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

type skills map[string][2]string

func (s skills) Skill(name string) (string, string, bool) {
	v, ok := s[name]
	return v[0], v[1], ok
}

func (s skills) Names() []string {
	var names []string
	for n := range s {
		names = append(names, n)
	}
	return names
}

func TestBuiltinsSchemas(t *testing.T) {
	all := tool.Builtins(tool.Options{Skills: skills{}})
	var names []string
	for _, tl := range all {
		info := tl.Info()
		names = append(names, info.Name)
		if strings.TrimSpace(info.Description) == "" || info.Kind == "" || info.Timeout <= 0 {
			t.Errorf("%s: description, kind or timeout missing: %+v", info.Name, info)
		}
		var schema map[string]any
		if err := json.Unmarshal(info.Schema, &schema); err != nil {
			t.Errorf("%s: schema is not JSON: %v", info.Name, err)
			continue
		}
		if schema["type"] != "object" {
			t.Errorf("%s: schema type %v, want object", info.Name, schema["type"])
		}
		// OpenAI wants "properties" on every object schema.
		if _, ok := schema["properties"].(map[string]any); !ok {
			t.Errorf("%s: schema has no properties: %s", info.Name, info.Schema)
		}
		// Some providers refuse type unions such as ["null", "array"].
		if strings.Contains(string(info.Schema), `"type":[`) {
			t.Errorf("%s: schema has a type union: %s", info.Name, info.Schema)
		}
		// The schema resolves (at the first call): input that is not an
		// object is the model's to fix, not a failure of the tool.
		if res, err := tl.Run(t.Context(), &tool.Env{}, json.RawMessage(`[1]`)); err != nil || !res.IsError {
			t.Errorf("%s: input that is not an object: %+v, %v", info.Name, res, err)
		}
	}
	for _, want := range []string{"read", "write", "edit", "multiedit", "apply_patch", "glob", "grep", "list", "bash", "bash_output", "bash_kill", "todo", "webfetch", "skill"} {
		if !slices.Contains(names, want) {
			t.Errorf("Builtins lacks %s (has %v)", want, names)
		}
	}
	if without := tool.Builtins(tool.Options{}); slices.ContainsFunc(without, func(tl tool.Tool) bool { return tl.Info().Name == "skill" }) {
		t.Error("skill is offered without skills")
	}
}

func TestDenied(t *testing.T) {
	err := fmt.Errorf("check: %w", &permission.DeniedError{Permission: "edit", Subjects: []string{"a.go"}, Message: "not now"})
	res, ok := tool.Denied(err)
	if !ok || !res.IsError || !strings.Contains(res.Output, "not now") || !strings.Contains(res.Output, "a.go") {
		t.Errorf("Denied = %+v, %v", res, ok)
	}
	if _, ok := tool.Denied(errors.New("disk on fire")); ok {
		t.Error("Denied took an environment failure for a refusal")
	}
}

func TestTodo(t *testing.T) {
	h := newHarness(t)
	res := h.ok("todo", map[string]any{"todos": []map[string]any{
		{"content": "read the code", "status": "completed", "priority": "high"},
		{"content": "fix the bug", "status": "in_progress"},
		{"content": "old idea", "status": "cancelled"},
		{"content": "run the tests", "status": "pending", "priority": "low"},
	}})
	want := "The plan has 4 steps, 1 completed.\n[x] read the code (high)\n[~] fix the bug\n[-] old idea\n[ ] run the tests (low)"
	if res.Output != want {
		t.Errorf("output %q, want %q", res.Output, want)
	}
	wantPlan := []agent.PlanEntry{
		{Content: "read the code", Status: "completed", Priority: "high"},
		{Content: "fix the bug", Status: "in_progress"},
		{Content: "run the tests", Status: "pending", Priority: "low"},
	}
	if len(h.plans) != 1 || !slices.Equal(h.plans[0], wantPlan) {
		t.Errorf("plan published %+v", h.plans)
	}
	h.fails("todo", map[string]any{"todos": []map[string]any{{"content": "x", "status": "doing"}}}, "Invalid input")
	h.fails("todo", map[string]any{"todos": []map[string]any{{"content": " ", "status": "pending"}}}, "no content")
	if res := h.ok("todo", map[string]any{"todos": []any{}}); res.Output != "The plan is now empty." {
		t.Errorf("empty plan: %q", res.Output)
	}
}

func TestSkill(t *testing.T) {
	h := newHarness(t, tool.Options{Skills: skills{"release": {"Tag, then push.\n", "/skills/release"}}})
	res := h.ok("skill", map[string]any{"name": "release"})
	if !strings.Contains(res.Output, "Tag, then push.") || !strings.Contains(res.Output, "/skills/release") {
		t.Errorf("output %q", res.Output)
	}
	if calls := h.permissions(); len(calls) != 1 || calls[0].Permission != "skill" || calls[0].Subjects[0] != "release" {
		t.Errorf("permission calls %+v", calls)
	}
	h.fails("skill", map[string]any{"name": "deploy"}, `no skill named "deploy"`, "release")
	h.deny("skill", "not that one")
	h.fails("skill", map[string]any{"name": "release"}, "not that one")
}

func TestRunWithoutEnvironment(t *testing.T) {
	h := newHarness(t)
	if _, err := h.tools["read"].Run(context.Background(), nil, json.RawMessage(`{"path":"a"}`)); err == nil {
		t.Error("a nil Env is not an error")
	}
	env := h.env()
	env.Permit = nil
	h.write("a", "a")
	for name, input := range map[string]string{
		"read": `{"path":"a"}`,
		"edit": `{"path":"a","oldString":"a","newString":"b"}`,
		"bash": `{"command":"true"}`,
	} {
		if _, err := h.tools[name].Run(context.Background(), env, json.RawMessage(input)); err == nil {
			t.Errorf("%s without a permission checker is not an error", name)
		}
	}
}

func TestDiskWrite(t *testing.T) {
	root := t.TempDir()
	d := tool.NewDisk(root)
	ctx := context.Background()
	if d.Root() != root {
		t.Errorf("root %q", d.Root())
	}
	// Parents are created.
	p := filepath.Join(root, "a", "b", "new.txt")
	if err := d.WriteFile(ctx, p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	// The mode of an existing file is kept.
	script := filepath.Join(root, "run.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o750)
	if err := d.WriteFile(ctx, script, []byte("#!/bin/sh\necho hi\n")); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(script); info.Mode().Perm() != 0o750 {
		t.Errorf("mode %v, want 0750", info.Mode().Perm())
	}
	// Writing through a link keeps the link.
	target := filepath.Join(root, "target.txt")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(root, "link.txt")
	if err := os.Symlink("target.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile(ctx, link, []byte("via link")); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Lstat(link); info.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(target); string(b) != "via link" {
		t.Errorf("target holds %q", b)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".darman-") {
			t.Errorf("left %s", e.Name())
		}
	}
	if err := d.WriteFile(ctx, filepath.Join(root, "a"), []byte("x")); err == nil {
		t.Error("writing over a directory succeeded")
	}
	if _, err := d.ReadFile(ctx, filepath.Join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if err := d.Remove(ctx, target); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDefinitions encodes the built-in tools as a request sends them
// (name, description, schema) and reports their size, which every request
// pays for: bytes, and tokens estimated at four bytes each.
func BenchmarkDefinitions(b *testing.B) {
	type def struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"input_schema"`
	}
	tools := tool.Builtins(tool.Options{Skills: skills{}})
	var size int
	for b.Loop() {
		defs := make([]def, len(tools))
		for i, tl := range tools {
			info := tl.Info()
			defs[i] = def{info.Name, info.Description, info.Schema}
		}
		out, err := json.Marshal(defs)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "bytes")
	b.ReportMetric(float64(size)/4, "tokens-est")
}
