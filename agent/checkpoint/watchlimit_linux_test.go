package checkpoint_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/darman-dev/darman/agent/checkpoint"
)

// When the inotify watch limit is reached, snapshots walk the tree and
// stay right, and the log and Status say why. The limit is lowered in a
// user namespace of the test's own (its user.max_inotify_watches), so
// nothing outside it changes.
func TestWatchLimitFallsBackToTheWalk(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWatchLimitHelper$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "DARMAN_TEST_WATCH_LIMIT=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(err.Error(), "operation not permitted") {
		t.Skipf("no user namespace here: %v", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWatchLimitHelper") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestWatchLimitHelper is TestWatchLimitFallsBackToTheWalk's process in
// its user namespace.
func TestWatchLimitHelper(t *testing.T) {
	if os.Getenv("DARMAN_TEST_WATCH_LIMIT") == "" {
		t.Skip("run by TestWatchLimitFallsBackToTheWalk")
	}
	must(t, os.WriteFile("/proc/sys/user/max_inotify_watches", []byte("4\n"), 0))
	root := t.TempDir()
	for i := range 10 {
		write(t, root, fmt.Sprintf("d%d/f.go", i), "package d\n")
	}
	var logs bytes.Buffer
	w := newSnapper(t, root, func(o *checkpoint.Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	walk := newSnapper(t, root, func(o *checkpoint.Options) { o.NoWatch = true })
	for i := range 4 {
		write(t, root, fmt.Sprintf("d%d/f.go", 7-i), fmt.Sprintf("package d // %d\n", i))
		write(t, root, fmt.Sprintf("new%d/g.go", i), "package g\n")
		if a, b := w.snap(), walk.snap(); a.Tree != b.Tree {
			t.Fatalf("snapshot %d: %v, the walk's %v", i, w.paths(a), walk.paths(b))
		}
	}
	st, err := w.k.Status(t.Context(), root)
	must(t, err)
	if st.Watcher != "" || st.Partial != 0 || st.Walks != 4 || !strings.Contains(st.WatchError, "inotify watch limit") || !strings.Contains(st.WatchError, "max_user_watches") {
		t.Errorf("status: %+v", st)
	}
	if !strings.Contains(logs.String(), "no file watcher for this workspace") || strings.Count(logs.String(), "no file watcher") != 1 {
		t.Errorf("the log says, once:\n%s", logs.String())
	}
}
