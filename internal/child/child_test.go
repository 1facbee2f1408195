//go:build unix

package child_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/child"
)

// start runs a shell that starts a grandchild and ignores SIGTERM, the
// hardest case: only SIGKILL of the whole group ends it.
// It returns the leader's PID (the group's ID) and a channel closed once the
// leader has been reaped.
func start(t *testing.T) (int, chan struct{}) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "trap '' TERM; sleep 60 & wait")
	cmd.SysProcAttr = child.SysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	pgid := cmd.Process.Pid
	t.Cleanup(func() { child.StopGroup(pgid, exited, 0) })
	return pgid, exited
}

func TestStopGroupKillsGrandchildren(t *testing.T) {
	pgid, exited := start(t)
	if !child.GroupAlive(pgid) {
		t.Fatal("the group is not alive after start")
	}
	child.StopGroup(pgid, exited, 100*time.Millisecond)
	if child.GroupAlive(pgid) {
		t.Fatal("a process of the group survived StopGroup")
	}
	select {
	case <-exited:
	default:
		t.Fatal("StopGroup returned before the leader was reaped")
	}
}

func TestRegistryCloseStopsWhatIsLeft(t *testing.T) {
	var r child.Registry
	a, _ := start(t)
	b, _ := start(t)
	forgetA := r.Add(a, "a")
	r.Add(b, "b")
	forgetA() // a's owner stopped it (here: it is left running on purpose)
	if live := r.Live(); len(live) != 1 || live[0].Name != "b" {
		t.Fatalf("live = %+v", live)
	}
	r.Close(100 * time.Millisecond)
	if child.GroupAlive(b) {
		t.Fatal("Close left a recorded group running")
	}
	if !child.GroupAlive(a) {
		t.Fatal("Close stopped a group its owner had taken back")
	}
	c, _ := start(t)
	r.Add(c, "late")
	if child.GroupAlive(c) {
		t.Fatal("a group added after Close kept running")
	}
}
