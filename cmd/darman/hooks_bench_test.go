//go:build linux

package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/sandbox"
)

// BenchmarkNoOpHook measures what a no-op PreToolUse hook (exit 0, no
// output) adds to a tool call: one Engine.Run as the turn makes it before
// the call runs, the hook started the way darman starts it (bash -c, its
// own process group, the event's JSON on stdin), plainly and in the
// sandbox (the real darman binary as sandbox-exec). A call with no hook
// configured costs nothing: the turn asks Has and skips. Goal: at most
// 5 ms per tool call (median).
func BenchmarkNoOpHook(b *testing.B) {
	plainRoot := b.TempDir()
	// A git workspace, whose protected paths need a mount namespace (for
	// an unprivileged darman, the workspace's namespace holder).
	gitRoot := b.TempDir()
	os.MkdirAll(filepath.Join(gitRoot, ".git", "hooks"), 0o755)
	os.WriteFile(filepath.Join(gitRoot, ".git", "config"), []byte("[core]\n"), 0o644)
	sb := sandbox.New(sandbox.Options{Helper: darmanBin})
	defer sb.Close()
	input := hook.Input{Event: hook.PreToolUse, Session: "ses_bench", Tool: "bash", ToolUseID: "c1",
		ToolInput: json.RawMessage(`{"command":"go test ./...","description":"run the tests"}`)}
	for _, c := range []struct {
		name string
		sb   *sandbox.Sandbox
		root string
	}{{"plain", nil, plainRoot}, {"sandboxed", sb, plainRoot}, {"sandboxed-git", sb, gitRoot}} {
		root := c.root
		b.Run(c.name, func(b *testing.B) {
			if c.sb != nil && !c.sb.Status().Active() {
				b.Skipf("no sandbox: %s", c.sb.Status().Reason)
			}
			e, problems, err := hook.New(hook.Options{
				Hooks: []hook.Hook{{Event: hook.PreToolUse, Matcher: "Bash", Command: "exit 0", Origin: "bench"}},
				Root:  root, Environ: os.Environ(),
				Command: func(h hook.Hook, dir string, environ []string) (*exec.Cmd, error) {
					return tool.ShellCommand(h.Command, dir, environ, c.sb, sandbox.Request{Root: root, Session: "bench"})
				},
			})
			if err != nil || len(problems) > 0 {
				b.Fatal(err, problems)
			}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				res := e.Run(context.Background(), input)
				took = append(took, time.Since(start))
				if res.Ran != 1 || len(res.Failures) > 0 || res.Block {
					b.Fatalf("the hook did not run cleanly: %+v", res)
				}
			}
			b.ReportMetric(float64(median(took).Microseconds())/1000, "ms-median/call")
		})
	}
}
