package tool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/testenv"
)

// harness runs the built-in tools against a Disk workspace in a temporary
// directory, with a scripted permission checker that records every call.
type harness struct {
	t     *testing.T
	root  string
	ws    *tool.Disk
	tools map[string]tool.Tool
	files *tool.FileTimes
	jobs  *tool.Jobs
	id    agent.ID

	mu       sync.Mutex
	calls    []permission.Call
	denials  map[string]string // permission → the user's message
	progress []string
	plans    [][]agent.PlanEntry
}

func newHarness(t *testing.T, opts ...tool.Options) *harness {
	t.Helper()
	root := t.TempDir()
	// Resolve links in the temp dir (macOS's /var), so paths compare.
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	var o tool.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	h := &harness{
		t:       t,
		root:    root,
		ws:      tool.NewDisk(root),
		tools:   map[string]tool.Tool{},
		files:   &tool.FileTimes{},
		jobs:    tool.NewJobs(nil),
		id:      agent.NewSessionID(),
		denials: map[string]string{},
	}
	for _, tl := range tool.Builtins(o) {
		h.tools[tl.Info().Name] = tl
	}
	t.Cleanup(func() {
		h.jobs.Close()
		tool.RemoveOutputs(h.id)
	})
	return h
}

// deny makes the checker refuse every call of permission, as a person
// would with message.
func (h *harness) deny(perm, message string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.denials[perm] = message
}

func (h *harness) env() *tool.Env {
	return &tool.Env{
		SessionID: h.id,
		CallID:    "call_1",
		Workspace: h.ws,
		Permit: func(ctx context.Context, c permission.Call) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.calls = append(h.calls, c)
			if msg, ok := h.denials[c.Permission]; ok {
				return &permission.DeniedError{Permission: c.Permission, Subjects: c.Subjects, Message: msg}
			}
			return nil
		},
		Progress: func(output string) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.progress = append(h.progress, output)
		},
		Plan: func(entries []agent.PlanEntry) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.plans = append(h.plans, entries)
		},
		Files: h.files,
		Jobs:  h.jobs,
	}
}

// runCtx calls a tool with input (marshalled to JSON unless it is a
// string, taken as raw JSON).
func (h *harness) runCtx(ctx context.Context, name string, input any) (tool.Result, error) {
	h.t.Helper()
	tl, ok := h.tools[name]
	if !ok {
		h.t.Fatalf("no tool %q", name)
	}
	var raw json.RawMessage
	if s, ok := input.(string); ok {
		raw = json.RawMessage(s)
	} else {
		b, err := json.Marshal(input)
		if err != nil {
			h.t.Fatal(err)
		}
		raw = b
	}
	return tl.Run(ctx, h.env(), raw)
}

// run calls a tool and fails the test on a Go error.
func (h *harness) run(name string, input any) tool.Result {
	h.t.Helper()
	res, err := h.runCtx(context.Background(), name, input)
	if err != nil {
		h.t.Fatalf("%s(%v): %v", name, input, err)
	}
	return res
}

// ok calls a tool and fails the test unless it succeeded.
func (h *harness) ok(name string, input any) tool.Result {
	h.t.Helper()
	res := h.run(name, input)
	if res.IsError {
		h.t.Fatalf("%s(%v) failed: %s", name, input, res.Output)
	}
	return res
}

// fails calls a tool and fails the test unless the result is an error
// containing every one of want.
func (h *harness) fails(name string, input any, want ...string) tool.Result {
	h.t.Helper()
	res := h.run(name, input)
	if !res.IsError {
		h.t.Fatalf("%s(%v) succeeded, want a failure: %s", name, input, res.Output)
	}
	for _, w := range want {
		if !strings.Contains(res.Output, w) {
			h.t.Errorf("%s failure %q does not say %q", name, res.Output, w)
		}
	}
	return res
}

func (h *harness) path(rel string) string { return filepath.Join(h.root, rel) }

func (h *harness) write(rel, content string) {
	h.t.Helper()
	p := h.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) content(rel string) string {
	h.t.Helper()
	b, err := os.ReadFile(h.path(rel))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *harness) permissions() []permission.Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]permission.Call(nil), h.calls...)
}

// eventually waits up to 10 s for cond, failing with what.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, what, 10*time.Second, cond)
}

// setMtime gives a file a modification time some seconds in the past.
func setMtime(t *testing.T, path string, secondsAgo int) {
	t.Helper()
	when := time.Now().Add(-time.Duration(secondsAgo) * time.Second)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}
