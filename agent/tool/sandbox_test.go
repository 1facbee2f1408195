//go:build linux

package tool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/sandbox"
)

// sandboxed is a harness whose bash runs in the real sandbox (this test
// binary is its helper: internal/sandbox runs "sandbox-exec" from its
// init), or skips where there is none.
func sandboxed(t *testing.T, opts sandbox.Options) *harness {
	t.Helper()
	opts.TempRoot = t.TempDir()
	sb := sandbox.New(opts)
	t.Cleanup(func() { sb.Close() })
	if st := sb.Status(); !st.Active() && opts.Mode != sandbox.Required {
		t.Skipf("no OS sandbox here: %s", st.Reason)
	}
	return newHarness(t, tool.Options{Sandbox: sb})
}

func TestBashSandboxEscapeIsAskedAndRunsOutsideOnlyWhenAllowed(t *testing.T) {
	h := sandboxed(t, sandbox.Options{})
	outside := t.TempDir()
	refused := filepath.Join(outside, "refused")
	h.deny(tool.SandboxEscape, "no")
	res := h.run("bash", map[string]any{"command": "echo x > " + refused})
	if !res.IsError || !strings.Contains(res.Output, "refused by darman's sandbox") || !strings.Contains(res.Output, "not allowed (permission sandbox_escape)") {
		t.Errorf("refused escape: %+v", res)
	}
	if _, err := os.Stat(refused); err == nil {
		t.Error("the command ran outside the sandbox although the escape was refused")
	}

	h = sandboxed(t, sandbox.Options{})
	allowed := filepath.Join(outside, "allowed")
	res = h.run("bash", map[string]any{"command": "echo x > " + allowed})
	if res.IsError || !strings.Contains(res.Output, "this is that run") {
		t.Errorf("allowed escape: %+v", res)
	}
	if _, err := os.Stat(allowed); err != nil {
		t.Errorf("the allowed escape did not run: %v", err)
	}
	asked := false
	for _, c := range h.calls {
		if c.Permission == tool.SandboxEscape && c.Subjects[0] == "echo x > "+allowed {
			asked = true
		}
	}
	if !asked {
		t.Errorf("sandbox_escape was not asked: %+v", h.calls)
	}
}

func TestBashBackgroundJobsAreSandboxed(t *testing.T) {
	h := sandboxed(t, sandbox.Options{})
	marker := filepath.Join(t.TempDir(), "bg")
	res := h.ok("bash", map[string]any{"command": "echo x > " + marker + "; echo inside > inside.txt", "run_in_background": true})
	if !strings.Contains(res.Output, "job-1") {
		t.Fatalf("not started as job-1: %s", res.Output)
	}
	eventually(t, "the job's end", func() bool {
		return !strings.Contains(h.ok("bash_output", map[string]any{"job_id": "job-1"}).Output, "is running")
	})
	if _, err := os.Stat(marker); err == nil {
		t.Error("a background job wrote outside the workspace")
	}
	if b, _ := os.ReadFile(filepath.Join(h.root, "inside.txt")); string(b) != "inside\n" {
		t.Errorf("the background job's write inside: %q", b)
	}
}

func TestBashWithoutASandboxSaysSoOnceOrRefusesWhenRequired(t *testing.T) {
	h := newHarness(t, tool.Options{Sandbox: sandbox.New(sandbox.Options{Helper: "/nonexistent/darman", TempRoot: t.TempDir()})})
	first := h.ok("bash", map[string]any{"command": "echo one"})
	second := h.ok("bash", map[string]any{"command": "echo two"})
	if !strings.Contains(first.Output, "without an OS sandbox") || strings.Contains(second.Output, "without an OS sandbox") {
		t.Errorf("the notice should come once:\n%s\n---\n%s", first.Output, second.Output)
	}
	h = newHarness(t, tool.Options{Sandbox: sandbox.New(sandbox.Options{Mode: sandbox.Required, Helper: "/nonexistent/darman", TempRoot: t.TempDir()})})
	res := h.run("bash", map[string]any{"command": "echo ran > ran.txt"})
	if !res.IsError || !strings.Contains(res.Output, "required") {
		t.Errorf("required mode without a sandbox: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(h.root, "ran.txt")); err == nil {
		t.Error("the command ran without the required sandbox")
	}
}
