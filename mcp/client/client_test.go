package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/mcp/client"
)

// fake is a definition of the fake server (this test binary in mode).
// Its bounds are for a server that never answers: a test that wants one
// to expire sets its own, shorter, so a race-built server starting or
// answering slowly on a loaded machine is not taken for a hung one.
func fake(t *testing.T, name, mode string) client.Definition {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return client.Definition{Name: name, Command: exe, Env: map[string]string{"DARMAN_FAKE_MCP": mode}, StartupTimeout: time.Minute, CallTimeout: time.Minute}
}

func newManager(t *testing.T, defs ...client.Definition) (*client.Manager, *child.Registry) {
	reg := &child.Registry{}
	m := client.New(defs, client.Options{Children: reg})
	t.Cleanup(func() {
		m.Close()
		if live := reg.Live(); len(live) != 0 {
			t.Errorf("process groups left after Close: %v", live)
		}
	})
	return m, reg
}

func find(t *testing.T, tools []tool.Tool, name string) tool.Tool {
	t.Helper()
	var names []string
	for _, tl := range tools {
		if tl.Info().Name == name {
			return tl
		}
		names = append(names, tl.Info().Name)
	}
	t.Fatalf("no tool %q among %q", name, names)
	return nil
}

// allowEnv permits every call and records what was asked.
type recorder struct {
	mu    sync.Mutex
	calls []permission.Call
}

func (r *recorder) env() *tool.Env {
	return &tool.Env{Permit: func(_ context.Context, c permission.Call) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.calls = append(r.calls, c)
		return nil
	}}
}

func TestFaultsAreClassifiedAndOthersKeepWorking(t *testing.T) {
	m, _ := newManager(t,
		fake(t, "good", "ok"),
		client.Definition{Name: "missing", Command: "darman-no-such-mcp-server"},
		fake(t, "exits", "exit"),
		func() client.Definition {
			d := fake(t, "hangs", "hang")
			d.StartupTimeout = 500 * time.Millisecond
			return d
		}(),
		fake(t, "garbage", "garbage"),
		fake(t, "flood", "flood"),
		client.Definition{Name: "both", Command: "x", URL: "http://127.0.0.1:1/mcp"},
		func() client.Definition { d := fake(t, "sampler", "ok"); d.SamplingMaxTokens = 100; return d }(),
	)
	m.Start()
	err := m.Wait(context.Background())
	var se *client.StartupError
	if !errors.As(err, &se) {
		t.Fatalf("Wait = %v; want a *StartupError", err)
	}
	want := map[string]client.FailureClass{
		"missing": client.FailureNotFound,
		"exits":   client.FailureExited,
		"hangs":   client.FailureHandshakeTimeout,
		"garbage": client.FailureProtocol,
		"both":    client.FailureInvalidConfig,
		"sampler": client.FailureInvalidConfig,
	}
	got := map[string]client.FailureClass{}
	for _, f := range se.Failures {
		got[f.Server] = f.Class
		if len(f.Message) > 410 {
			t.Errorf("%s: message of %d bytes is not bounded", f.Server, len(f.Message))
		}
	}
	for name, class := range want {
		if got[name] != class {
			t.Errorf("%s failed as %q; want %q (all: %v)", name, got[name], class, se.Error())
		}
	}
	if _, ok := got["good"]; ok {
		t.Errorf("good failed: %v", se)
	}
	if _, ok := got["flood"]; ok {
		t.Errorf("a server flooding stderr failed: %v", se)
	}
	if !strings.Contains(se.Error(), "fatal: no config") {
		t.Errorf("the exited server's stderr is not in the error: %v", se)
	}
	tools, err := m.Tools(context.Background())
	if err != nil {
		t.Fatalf("Tools with only optional failures: %v", err)
	}
	rec := &recorder{}
	res, err := find(t, tools, "good_echo").Run(context.Background(), rec.env(), json.RawMessage(`{"text":"hi"}`))
	if err != nil || res.IsError || res.Output != "echo: hi\ndone" {
		t.Fatalf("good_echo = %+v, %v", res, err)
	}
	if len(rec.calls) != 1 || rec.calls[0].Permission != permission.MCP || rec.calls[0].Subjects[0] != "good_echo" {
		t.Errorf("permission asked: %+v; want mcp good_echo", rec.calls)
	}
	find(t, tools, "flood_echo")
	for _, s := range m.Status() {
		if s.Name == "good" && (s.State != client.StateReady || s.Tools != 9) {
			t.Errorf("good status %+v", s)
		}
		if s.Name == "exits" && s.State == client.StateReady {
			t.Errorf("exits status %+v", s)
		}
	}
}

func TestRequiredFailureBlocksTools(t *testing.T) {
	d := client.Definition{Name: "must", Command: "darman-no-such-mcp-server", Required: true}
	m, _ := newManager(t, d, fake(t, "fine", "ok"))
	_, err := m.Tools(context.Background())
	var se *client.StartupError
	if !errors.As(err, &se) || !se.Required() || se.Failures[0].Server != "must" {
		t.Fatalf("Tools = %v; want a StartupError naming the required server", err)
	}
}

func TestCrashRestartsOnNextUse(t *testing.T) {
	m, _ := newManager(t, fake(t, "f", "ok"))
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	tools, _ := m.Tools(context.Background())
	rec := &recorder{}
	res, err := find(t, tools, "f_crash").Run(context.Background(), rec.env(), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Output, "crashed") {
		t.Fatalf("crash call = %+v, %v; want a crashed error result", res, err)
	}
	if s := m.Status()[0]; s.State != client.StateFailed || s.Failure.Class != client.FailureCrashed {
		t.Errorf("after the crash: %+v", s)
	}
	res, err = find(t, tools, "f_echo").Run(context.Background(), rec.env(), json.RawMessage(`{"text":"again"}`))
	if err != nil || res.IsError || !strings.HasPrefix(res.Output, "echo: again") {
		t.Fatalf("call after the crash = %+v, %v; want the restarted server's answer", res, err)
	}
	if s := m.Status()[0]; s.State != client.StateReady {
		t.Errorf("after the restart: %+v", s)
	}
}

func TestCallTimeoutAndToolErrors(t *testing.T) {
	// The 300 ms call timeout is f's, whose hang it must end; the calls
	// that must answer go to g, so that one answered slowly under load
	// is not taken for a timeout.
	d := fake(t, "f", "ok")
	d.CallTimeout = 300 * time.Millisecond
	m, _ := newManager(t, d, fake(t, "g", "ok"))
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	tools, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	res, err := find(t, tools, "f_hang").Run(context.Background(), rec.env(), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Output, string(client.FailureCallTimeout)) {
		t.Fatalf("hang = %+v, %v; want a call timeout result", res, err)
	}
	res, err = find(t, tools, "g_fails").Run(context.Background(), rec.env(), nil)
	if err != nil || !res.IsError || res.Output != "no such issue" {
		t.Fatalf("fails = %+v, %v; want the server's isError text", res, err)
	}
	res, _ = find(t, tools, "g_echo").Run(context.Background(), rec.env(), json.RawMessage(`{not json`))
	if !res.IsError {
		t.Errorf("bad JSON arguments were sent: %+v", res)
	}
	denied := &tool.Env{Permit: func(context.Context, permission.Call) error {
		return &permission.DeniedError{}
	}}
	res, err = find(t, tools, "g_echo").Run(context.Background(), denied, json.RawMessage(`{"text":"x"}`))
	if err != nil || !res.IsError {
		t.Errorf("denied call = %+v, %v; want an error result", res, err)
	}
}

func TestListChangedNewGenerationWhileCallInFlight(t *testing.T) {
	m, _ := newManager(t, fake(t, "f", "ok"))
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	tools, _ := m.Tools(context.Background())
	gen := m.Status()[0].Generation
	res, err := find(t, tools, "f_slow_then_add").Run(context.Background(), (&recorder{}).env(), nil)
	if err != nil || res.Output != "slow done" {
		t.Fatalf("in-flight call = %+v, %v", res, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for m.Status()[0].Generation == gen && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := m.Status()[0].Generation; g <= gen {
		t.Fatalf("generation stayed %d after tools/list_changed", g)
	}
	tools, _ = m.Tools(context.Background())
	res, err = find(t, tools, "f_added").Run(context.Background(), (&recorder{}).env(), nil)
	if err != nil || res.Output != "added ok" {
		t.Fatalf("new generation's tool = %+v, %v", res, err)
	}
}

func TestProbeExitFallsBackToInitialize(t *testing.T) {
	m, _ := newManager(t, fake(t, "old", "probe-exit"))
	if err := m.Wait(context.Background()); err != nil {
		t.Fatalf("a server that exits on server/discover: %v", err)
	}
	if s := m.Status()[0]; s.State != client.StateReady {
		t.Errorf("status %+v", s)
	}
}

// The protocol a server spoke is remembered across runs: a server that
// exits on the probe is spawned twice the first time, once afterwards.
func TestProtocolCacheSkipsTheProbeNextRun(t *testing.T) {
	dir := t.TempDir()
	cache, mark := filepath.Join(dir, "mcp", "protocols.json"), filepath.Join(dir, "starts")
	d := fake(t, "old", "probe-exit")
	d.Env["DARMAN_FAKE_MARK"] = mark
	starts := func() int {
		data, _ := os.ReadFile(mark)
		return strings.Count(string(data), "start")
	}
	for run, want := range []int{2, 3} {
		m := client.New([]client.Definition{d}, client.Options{Children: newRegistry(t), ProtocolCache: cache})
		err := m.Wait(context.Background())
		m.Close()
		if err != nil {
			t.Fatalf("run %d: %v", run+1, err)
		}
		if got := starts(); got != want {
			t.Errorf("after run %d: %d starts; want %d (the second run must skip the probe)", run+1, got, want)
		}
	}
	data, err := os.ReadFile(cache)
	if err != nil || !strings.Contains(string(data), "2025-11-25") || strings.Contains(string(data), d.Command) {
		t.Errorf("cache file = %q, %v; want the protocol by digest, no command", data, err)
	}
}

// Cancelling a call (the user stops the turn) tells the server with
// notifications/cancelled, and the server stays usable.
func TestCancelledCallNotifiesTheServer(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "marks")
	d := fake(t, "s", "ok")
	d.Env["DARMAN_FAKE_MARK"] = mark
	m, _ := newManager(t, d)
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	tools, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := find(t, tools, "s_hang").Run(ctx, (&recorder{}).env(), json.RawMessage(`{}`))
		done <- err
	}()
	waitFor(t, "the server to start the call", func() bool {
		data, _ := os.ReadFile(mark)
		return strings.Contains(string(data), "hanging")
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v; want the context's cancellation", err)
	}
	waitFor(t, "the server to see notifications/cancelled", func() bool {
		data, _ := os.ReadFile(mark)
		return strings.Contains(string(data), "cancelled")
	})
	res, err := find(t, tools, "s_echo").Run(context.Background(), (&recorder{}).env(), json.RawMessage(`{"text":"still here"}`))
	if err != nil || !strings.HasPrefix(res.Output, "echo: still here") {
		t.Errorf("after the cancelled call: %+v, %v", res, err)
	}
}

func TestDuplicateNamesAcrossServersAreRefused(t *testing.T) {
	m, _ := newManager(t, fake(t, "a_b", "ok"), func() client.Definition { d := fake(t, "a", "ok"); d.Allow = []string{"b_*"}; return d }())
	_ = m.Wait(context.Background())
	// "a" exposes nothing named b_*, so there is no clash; allow echo.
	if _, err := m.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	m2, _ := newManager(t, fake(t, "x.y", "ok"), fake(t, "x_y", "ok"))
	_ = m2.Wait(context.Background())
	tools, err := m2.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, tl := range tools {
		if tl.Info().Name == "x_y_echo" {
			count++
		}
	}
	if count != 1 {
		t.Errorf("x_y_echo offered %d times", count)
	}
	st := m2.Status()
	if !strings.Contains(strings.Join(st[1].Refused, "\n"), "x_y/echo is refused: its model name \"x_y_echo\" is already x.y/echo's") {
		t.Errorf("refusal not reported: %+v", st)
	}
}

func TestModelName(t *testing.T) {
	if got := client.ModelName("my server", "read.file"); got != "my_server_read_file" {
		t.Errorf("ModelName = %q", got)
	}
	long := client.ModelName(strings.Repeat("s", 40), strings.Repeat("t", 40))
	long2 := client.ModelName(strings.Repeat("s", 40), strings.Repeat("t", 41))
	if len(long) != client.MaxNameLen || long == long2 || long != client.ModelName(strings.Repeat("s", 40), strings.Repeat("t", 40)) {
		t.Errorf("long names %q %q: want 64 chars, distinct, stable", long, long2)
	}
}

func TestSecretsNeverInMessages(t *testing.T) {
	d := client.Definition{Name: "s", Command: filepath.Join(t.TempDir(), "tok-supersecret"), Args: []string{"--token", "supersecret"}}
	m, _ := newManager(t, d)
	err := m.Wait(context.Background())
	if err == nil || strings.Contains(err.Error(), "supersecret") {
		t.Errorf("error %v leaks the secret", err)
	}
	if o := d.RedactedOrigin(); strings.Contains(o, "--token") {
		t.Errorf("origin %q shows arguments", o)
	}
	u := client.Definition{URL: "https://user:pw@h.example/mcp?key=abc"}
	if o := u.RedactedOrigin(); o != "http: https://h.example/mcp" {
		t.Errorf("origin %q", o)
	}
}
