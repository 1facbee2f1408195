//go:build unix

package child_test

import (
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/child"
)

// start runs a shell that starts a grandchild and ignores SIGTERM, the
// hardest case: only SIGKILL of the whole group ends it. It returns once
// the shell ignores SIGTERM (a Stop before that would end it by SIGTERM).
func start(t *testing.T, reg *child.Registry, name string) *child.Process {
	t.Helper()
	p, err := child.Start(exec.Command("sh", "-c", "trap '' TERM; sleep 60 & echo ready; wait"), child.Options{Name: name, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(0); p.Stdout.Close(); p.Stderr.Close() })
	io.ReadFull(p.Stdout, make([]byte, len("ready\n")))
	return p
}

func TestStopKillsGrandchildren(t *testing.T) {
	p := start(t, nil, "")
	if !p.GroupAlive() {
		t.Fatal("the group is not alive after start")
	}
	p.Stop(100 * time.Millisecond)
	if p.GroupAlive() || child.GroupAlive(p.PID()) {
		t.Fatal("a process of the group survived Stop")
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the leader was reaped")
	}
	if code, sig := p.ExitCode(); code != -1 || sig != "killed" {
		t.Errorf("exit = %d %q, want -1 killed", code, sig)
	}
}

// A server that exits when its stdin closes is stopped by the first step,
// with no signal.
func TestStopClosesStdinFirst(t *testing.T) {
	reg := &child.Registry{}
	p, err := child.Start(exec.Command("sh", "-c", "cat; echo bye >&2; exit 3"), child.Options{Name: "cat", Registry: reg, Stdin: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stdout.Close()
	if _, err := io.WriteString(p.Stdin, "hello\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(p.Stdout, buf); err != nil || string(buf) != "hello\n" {
		t.Fatalf("read %q, %v", buf, err)
	}
	if live := reg.Live(); len(live) != 1 || live[0].Name != "cat" || live[0].PGID != p.PID() {
		t.Fatalf("live = %+v", live)
	}
	p.Stop(10 * time.Second)
	errOut, _ := io.ReadAll(p.Stderr)
	p.Stderr.Close()
	if strings.TrimSpace(string(errOut)) != "bye" {
		t.Errorf("stderr = %q", errOut)
	}
	if code, sig := p.ExitCode(); code != 3 || sig != "" {
		t.Errorf("exit = %d %q, want 3", code, sig)
	}
	if live := reg.Live(); len(live) != 0 {
		t.Errorf("a stopped child is still recorded: %+v", live)
	}
}

// A child whose whole group exits on its own leaves the registry; with
// MergeStderr both streams arrive on Stdout.
func TestExitedGroupLeavesRegistry(t *testing.T) {
	reg := &child.Registry{}
	p, err := child.Start(exec.Command("sh", "-c", "echo out; echo err >&2"), child.Options{Registry: reg, MergeStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p.Stdout)
	p.Stdout.Close()
	if p.Stderr != nil {
		t.Error("Stderr is set with MergeStderr")
	}
	if string(out) != "out\nerr\n" {
		t.Errorf("output = %q", out)
	}
	<-p.Exited()
	deadline := time.Now().Add(5 * time.Second)
	for len(reg.Live()) != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if live := reg.Live(); len(live) != 0 {
		t.Errorf("an exited child is still recorded: %+v", live)
	}
}

func TestStartFailureLeavesNothing(t *testing.T) {
	reg := &child.Registry{}
	_, err := child.Start(exec.Command("/nonexistent/darman-test-program"), child.Options{Registry: reg, Stdin: true})
	if err == nil {
		t.Fatal("Start of a missing program succeeded")
	}
	if live := reg.Live(); len(live) != 0 {
		t.Errorf("live = %+v", live)
	}
}

func TestRegistryCloseStopsWhatIsLeft(t *testing.T) {
	r := &child.Registry{}
	a := start(t, r, "a")
	b := start(t, r, "b")
	if live := r.Live(); len(live) != 2 {
		t.Fatalf("live = %+v", live)
	}
	a.Stop(0) // a's owner stopped it
	if live := r.Live(); len(live) != 1 || live[0].Name != "b" {
		t.Fatalf("live = %+v", live)
	}
	r.Close(100 * time.Millisecond)
	if b.GroupAlive() {
		t.Fatal("Close left a recorded group running")
	}
	c := start(t, r, "late")
	if c.GroupAlive() {
		t.Fatal("a group added after Close kept running")
	}
}
