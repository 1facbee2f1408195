//go:build unix

package tool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// groupMembers lists the live (not zombie) processes of a process group,
// from /proc, or says whether kill -0 reaches any where there is no /proc.
func groupMembers(t *testing.T, pgid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		if syscall.Kill(-pgid, 0) == nil {
			return []string{"(kill -0 reaches the group)"}
		}
		return nil
	}
	var live []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			live = append(live, s[:i+1]+" "+f[0])
		}
	}
	return live
}

// pidIn finds the first line of out that is a number: the $$ a test
// command printed, which is its process group's id.
func pidIn(t *testing.T, out string) int {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if n, err := strconv.Atoi(strings.TrimSpace(l)); err == nil {
			return n
		}
	}
	t.Fatalf("no pid in %q", out)
	return 0
}

func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	eventually(t, "process group "+strconv.Itoa(pgid)+" to be gone", func() bool { return len(groupMembers(t, pgid)) == 0 })
}

func meta(t *testing.T, res tool.Result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(res.Metadata, &m); err != nil {
		t.Fatalf("metadata %s: %v", res.Metadata, err)
	}
	return m
}

func TestBashOutputAndExitCode(t *testing.T) {
	h := newHarness(t)
	res := h.ok("bash", map[string]any{"command": "echo out; echo err >&2; echo again", "description": "print three lines"})
	if want := "out\nerr\nagain\n\nExit code 0."; res.Output != want {
		t.Errorf("output %q, want %q", res.Output, want)
	}
	if res.Title != "print three lines" {
		t.Errorf("title %q", res.Title)
	}
	res = h.fails("bash", map[string]any{"command": "echo failing; exit 3"}, "failing", "Exit code 3.")
	if m := meta(t, res); m["exitCode"] != 3.0 || m["timedOut"] != false {
		t.Errorf("metadata %v", m)
	}
	if res := h.ok("bash", map[string]any{"command": "true"}); !strings.HasPrefix(res.Output, "(no output)") {
		t.Errorf("silent command: %q", res.Output)
	}
}

func TestBashWorkdirAndPermission(t *testing.T) {
	h := newHarness(t)
	h.write("sub/f.txt", "x")
	res := h.ok("bash", map[string]any{"command": "pwd; ls", "workdir": "sub"})
	if !strings.HasPrefix(res.Output, h.path("sub")+"\nf.txt\n") {
		t.Errorf("output %q", res.Output)
	}
	calls := h.permissions()
	if len(calls) != 1 || calls[0].Permission != permission.Bash || calls[0].Subjects[0] != "pwd; ls" || calls[0].Dir != h.path("sub") {
		t.Errorf("permission calls %+v", calls)
	}
	h.fails("bash", map[string]any{"command": "ls", "workdir": "nowhere"}, "does not exist")

	// A workdir outside the workspace asks for external_directory first.
	outside := t.TempDir()
	h.ok("bash", map[string]any{"command": "true", "workdir": outside})
	calls = h.permissions()
	last := calls[len(calls)-2:]
	if real, _ := filepath.EvalSymlinks(outside); last[0].Permission != permission.ExternalDirectory || last[0].Subjects[0] != real || last[1].Permission != permission.Bash {
		t.Errorf("permission calls for an outside workdir: %+v", last)
	}
}

func TestBashDenied(t *testing.T) {
	h := newHarness(t)
	h.deny(permission.Bash, "use the make target")
	h.fails("bash", map[string]any{"command": "touch made"}, "use the make target")
	if _, err := os.Stat(h.path("made")); err == nil {
		t.Error("a denied command ran")
	}
}

func TestBashStreamsProgress(t *testing.T) {
	h := newHarness(t)
	gate := h.path("gate")
	type outcome struct {
		res tool.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := h.runCtx(context.Background(), "bash", map[string]any{
			"command": "echo first; while [ ! -e gate ]; do sleep 0.01; done; echo second",
		})
		done <- outcome{res, err}
	}()
	eventually(t, "progress with the first line", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.progress) > 0 && h.progress[len(h.progress)-1] == "first\n"
	})
	select {
	case <-done:
		t.Fatal("the command finished before it was let go")
	default:
	}
	os.WriteFile(gate, nil, 0o644)
	o := <-done
	if o.err != nil || o.res.Output != "first\nsecond\n\nExit code 0." {
		t.Errorf("result %q, %v", o.res.Output, o.err)
	}
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	h := newHarness(t)
	res := h.fails("bash", map[string]any{"command": "echo $$; sleep 100 & sleep 100", "timeout": 300}, "timed out after 300ms")
	if m := meta(t, res); m["timedOut"] != true {
		t.Errorf("metadata %v", m)
	}
	assertGroupGone(t, pidIn(t, res.Output))
}

func TestBashTimeoutKillsWhatIgnoresTerm(t *testing.T) {
	h := newHarness(t)
	// The trap makes bash and the sleep it starts ignore SIGTERM; only the
	// SIGKILL that follows ends them.
	res := h.fails("bash", map[string]any{"command": "trap '' TERM; echo $$; sleep 100", "timeout": 200}, "timed out")
	assertGroupGone(t, pidIn(t, res.Output))
}

func TestBashCancel(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	type outcome struct {
		res tool.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := h.runCtx(ctx, "bash", map[string]any{"command": "echo $$; sleep 100"})
		done <- outcome{res, err}
	}()
	var pgid int
	eventually(t, "the command to print its pid", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.progress) == 0 {
			return false
		}
		pgid, _ = strconv.Atoi(strings.TrimSpace(h.progress[len(h.progress)-1]))
		return pgid > 0
	})
	start := time.Now()
	cancel()
	// Only the cancel ends the command before its sleep's 100 s. How soon
	// (a TERM, then cancelGrace) is logged, not bound: on a loaded CI
	// machine a cancel that works can take over a second.
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the command still ran 30 s after the cancel")
	}
	t.Logf("stopped %v after the cancel", time.Since(start))
	if o.err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", o.err)
	}
	assertGroupGone(t, pgid)
}

func TestBashLeftoverBecomesJob(t *testing.T) {
	h := newHarness(t)
	// A server-like child keeps the output pipe open and keeps writing.
	res := h.ok("bash", map[string]any{"command": "echo $$; (while true; do echo tick; sleep 0.02; done) & echo started"})
	if !strings.Contains(res.Output, "started") || !strings.Contains(res.Output, "background job job-1") {
		t.Fatalf("output %q", res.Output)
	}
	pgid := pidIn(t, res.Output)
	if len(groupMembers(t, pgid)) == 0 {
		t.Fatal("the background loop is not running")
	}
	eventually(t, "the job's output", func() bool {
		return strings.Contains(h.ok("bash_output", map[string]any{"job_id": "job-1"}).Output, "tick")
	})
	out := h.ok("bash_output", map[string]any{"job_id": "job-1"})
	if !strings.Contains(out.Output, "is running") {
		t.Errorf("status %q", out.Output)
	}
	h.jobs.Close()
	assertGroupGone(t, pgid)
}

func TestBashLeftoverWithoutJobsIsStopped(t *testing.T) {
	h := newHarness(t)
	env := h.env()
	env.Jobs = nil
	res, err := h.tools["bash"].Run(context.Background(), env, json.RawMessage(`{"command":"echo $$; sleep 100 & echo started"}`))
	if err != nil || !strings.Contains(res.Output, "they were stopped") {
		t.Fatalf("result %q, %v", res.Output, err)
	}
	assertGroupGone(t, pidIn(t, res.Output))
	res, _ = h.tools["bash"].Run(context.Background(), env, json.RawMessage(`{"command":"sleep 1","run_in_background":true}`))
	if !res.IsError || !strings.Contains(res.Output, "not available") {
		t.Errorf("background without Jobs: %q", res.Output)
	}
}

func TestBashBackgroundJob(t *testing.T) {
	h := newHarness(t)
	res := h.ok("bash", map[string]any{
		"command":           "echo $$; echo one; while [ ! -e gate ]; do sleep 0.01; done; echo two; exit 4",
		"run_in_background": true,
	})
	if !strings.Contains(res.Output, "job-1") {
		t.Fatalf("start: %q", res.Output)
	}
	var seen string
	eventually(t, "the job's first lines", func() bool {
		out := h.ok("bash_output", map[string]any{"job_id": "job-1"}).Output
		// The lines may come in more than one read: keep each read's
		// output, after its "New output (N bytes):" line.
		if _, after, ok := strings.Cut(out, "New output"); ok {
			_, body, _ := strings.Cut(after, "\n")
			seen += body + "\n"
		}
		return strings.Contains(seen, "one")
	})
	pgid := pidIn(t, seen)
	if out := h.ok("bash_output", map[string]any{"job_id": "job-1"}).Output; !strings.Contains(out, "No new output") || !strings.Contains(out, "running") {
		t.Errorf("second read: %q", out)
	}
	os.WriteFile(h.path("gate"), nil, 0o644)
	var last string
	eventually(t, "the job to end", func() bool {
		last += h.ok("bash_output", map[string]any{"job_id": "job-1"}).Output
		return strings.Contains(last, "exited with code 4")
	})
	if !strings.Contains(last, "two") {
		t.Errorf("reads after the gate: %q", last)
	}
	assertGroupGone(t, pgid)
	h.fails("bash_output", map[string]any{"job_id": "job-9"}, "no job", "job-1")
}

func TestBashKill(t *testing.T) {
	h := newHarness(t)
	h.ok("bash", map[string]any{"command": "echo $$; sleep 100 & sleep 100", "run_in_background": true})
	var pgid int
	eventually(t, "the job's pid", func() bool {
		out := h.ok("bash_output", map[string]any{"job_id": "job-1"}).Output
		if i := strings.Index(out, "\n"); i >= 0 && strings.Contains(out, "New output") {
			pgid = pidIn(t, out[i:])
		}
		return pgid > 0
	})
	res := h.ok("bash_kill", map[string]any{"job_id": "job-1"})
	if !strings.Contains(res.Output, "stopped by bash_kill") {
		t.Errorf("kill: %q", res.Output)
	}
	assertGroupGone(t, pgid)
}

func TestJobsCloseStopsEverything(t *testing.T) {
	h := newHarness(t)
	var pgids []int
	for i := 1; i <= 3; i++ {
		h.ok("bash", map[string]any{"command": "trap '' TERM; echo $$; sleep 100", "run_in_background": true})
		id := "job-" + strconv.Itoa(i)
		eventually(t, id+"'s pid", func() bool {
			out := h.ok("bash_output", map[string]any{"job_id": id}).Output
			if i := strings.Index(out, "\n"); i >= 0 && strings.Contains(out, "New output") {
				pgids = append(pgids, pidIn(t, out[i:]))
				return true
			}
			return false
		})
	}
	if err := h.jobs.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pgid := range pgids {
		if live := groupMembers(t, pgid); len(live) != 0 {
			t.Errorf("after Close, group %d still has %v", pgid, live)
		}
	}
	h.fails("bash", map[string]any{"command": "true", "run_in_background": true}, "session is ending")
}

func TestBashOutputCap(t *testing.T) {
	h := newHarness(t)
	res := h.ok("bash", map[string]any{"command": "seq 1 100000"})
	if len(res.Output) > 34<<10 {
		t.Errorf("output is %d bytes", len(res.Output))
	}
	if !strings.HasPrefix(res.Output, "1\n2\n3\n") || !strings.Contains(res.Output, "99999\n100000\n\nExit code 0.") || !strings.Contains(res.Output, "bytes omitted") {
		t.Errorf("head/tail not kept: %q ... %q", res.Output[:50], res.Output[len(res.Output)-300:])
	}
	path, _ := meta(t, res)["outputPath"].(string)
	if path == "" || !strings.Contains(res.Output, path) {
		t.Fatalf("no saved output path in %v", meta(t, res))
	}
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := lines(100000, strconv.Itoa); string(full) != want {
		t.Errorf("saved output is %d bytes, want %d", len(full), len(want))
	}
	// The model can read the rest without being asked about the temp dir.
	h.deny(permission.Read, "no")
	if r := h.ok("read", map[string]any{"path": path, "offset": 50000, "limit": 1}); !strings.HasPrefix(r.Output, " 50000\t50000") {
		t.Errorf("reading the saved output: %q", r.Output)
	}
}

// A process detached from the output (its own redirections) is found too:
// it belongs to the session's jobs, or, without them, is stopped.
func TestBashDetachedLeftover(t *testing.T) {
	h := newHarness(t)
	res := h.ok("bash", map[string]any{"command": "echo $$; nohup sleep 100 >/dev/null 2>&1 &"})
	if !strings.Contains(res.Output, "background job job-1") {
		t.Fatalf("output %q", res.Output)
	}
	pgid := pidIn(t, res.Output)
	if len(groupMembers(t, pgid)) == 0 {
		t.Fatal("the detached sleep is not running")
	}
	if out := h.ok("bash_output", map[string]any{"job_id": "job-1"}).Output; !strings.Contains(out, "is running") {
		t.Errorf("status %q", out)
	}
	h.ok("bash_kill", map[string]any{"job_id": "job-1"})
	assertGroupGone(t, pgid)

	env := h.env()
	env.Jobs = nil
	r, err := h.tools["bash"].Run(context.Background(), env, json.RawMessage(`{"command":"echo $$; nohup sleep 100 >/dev/null 2>&1 &"}`))
	if err != nil || !strings.Contains(r.Output, "they were stopped") {
		t.Fatalf("without jobs: %q, %v", r.Output, err)
	}
	assertGroupGone(t, pidIn(t, r.Output))
}
