package main_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// smallDisk mounts a tmpfs of size MiB on dir for the test, or skips it
// saying why (it needs root).
func smallDisk(t *testing.T, dir string, mib int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the full-disk test mounts a small tmpfs, which needs root")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm,mode=0700", mib), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs for the full-disk test (%v: %s)", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
}

// fill writes a file on dir's filesystem until only leave bytes are free,
// and returns its path.
func fill(t *testing.T, dir string, leave int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	path := dir + "/filler"
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for n := free - leave; n > 0; n -= int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(int64(len(chunk)), n)]); err != nil {
			t.Fatalf("filling the disk: %v", err)
		}
	}
	return path
}

// threeWritingTurns scripts turns "turn 0" to "turn 2": each writes
// newN.txt, then answers "Answer N.".
func threeWritingTurns() llmtest.Script {
	script := llmtest.Script{}
	for i := range 3 {
		script.Conversations = append(script.Conversations, llmtest.Conversation{Match: fmt.Sprintf("turn %d", i), Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("write", fmt.Sprintf(`{"path":"new%d.txt","content":"turn %d\n"}`, i, i))}},
			{Text: fmt.Sprintf("Answer %d.", i)}}})
	}
	return script
}

// sessionIn is the first session ID in a `sessions list --json` output.
func sessionIn(list string) string {
	return list[strings.Index(list, "ses_"):][:30]
}

// A data directory on a full disk (its sessions and the checkpoints'
// shadow repository both on it): the turn that hits it fails saying "disk
// full", every earlier session still lists and reads, and once space is
// freed darman works again, snapshots included.
func TestFullDiskFailsTheTurnAndKeepsTheSessions(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e, startFiles)
	smallDisk(t, e.dataDir(), 48)
	e.withModel(t, threeWritingTurns())
	e.ok("run", "--allow", "edit", "turn 0")
	first := e.ok("sessions", "list", "--json")

	filler := fill(t, e.dataDir(), 2<<20)
	out, errs, code := e.run("run", "--allow", "edit", "turn 1")
	if code == 0 || !strings.Contains(errs, "disk full") || strings.Contains(errs, "panic") || strings.Contains(errs, "SIGBUS") {
		t.Fatalf("a turn on a full disk: exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("on a full disk: %s", errs)
	if list := e.ok("sessions", "list", "--json"); !strings.Contains(list, sessionIn(first)) {
		t.Fatalf("the earlier session is gone on a full disk:\n%s", list)
	}
	if show := e.ok("sessions", "show", sessionIn(first)); !strings.Contains(show, "Answer 0.") {
		t.Fatalf("the earlier session on a full disk:\n%s", show)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.ok("run", "--allow", "edit", "turn 2")
	id := sessionIn(e.ok("sessions", "list", "--json", "-n", "1"))
	if show := e.ok("sessions", "show", id); !strings.Contains(show, "Answer 2.") {
		t.Fatalf("the turn after space was freed:\n%s", show)
	}
	if preview := e.ok("sessions", "revert", id, "--preview"); !strings.Contains(preview, "new2.txt") {
		t.Fatalf("the turn after space was freed has no snapshot to revert:\n%s", preview)
	}
}

// The checkpoints' shadow repository on a full disk (the sessions on
// another): the snapshot before a step that would change files cannot be
// written, so the step does not run (the turn could not be reverted) and
// the turn fails saying "disk full"; earlier sessions and checkpoints are
// kept, and once space is freed snapshots are taken again.
func TestFullCheckpointsDiskFailsTheStep(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e, startFiles)
	shadows := filepath.Join(e.dataDir(), "checkpoints")
	smallDisk(t, shadows, 8)
	e.withModel(t, threeWritingTurns())
	e.ok("run", "--allow", "edit", "turn 0")
	first := e.ok("sessions", "list", "--json")

	filler := fill(t, shadows, 0)
	out, errs, code := e.run("run", "--allow", "edit", "turn 1")
	if code == 0 || !strings.Contains(errs, "disk full") || strings.Contains(errs, "panic") {
		t.Fatalf("a turn whose checkpoint does not fit on the disk: exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("on a full disk: %s", errs)
	if _, err := os.Stat(filepath.Join(e.workspace, "new1.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the step ran without its snapshot (new1.txt: %v)", err)
	}
	// A revert snapshots the workspace first: on the full disk it says so.
	firstID := sessionIn(first)
	if _, errs, code := e.run("sessions", "revert", firstID, "--preview"); code == 0 || !strings.Contains(errs, "disk full") {
		t.Fatalf("a revert on the full disk: exit %d\n%s", code, errs)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if preview := e.ok("sessions", "revert", firstID, "--preview"); !strings.Contains(preview, "new0.txt") {
		t.Fatalf("the earlier turn's checkpoint after the full disk:\n%s", preview)
	}
	e.ok("run", "--allow", "edit", "turn 2")
	id := sessionIn(e.ok("sessions", "list", "--json", "-n", "1"))
	if preview := e.ok("sessions", "revert", id, "--preview"); !strings.Contains(preview, "new2.txt") {
		t.Fatalf("the turn after space was freed has no snapshot to revert:\n%s", preview)
	}
}

// The same with the failure in git's own hands: more files changed than a
// snapshot writes itself, so git hash-object writes their blobs and it is
// git that prints "No space left on device" (the disk keeps room for
// darman's own small writes). Such files were counted as unreadable and
// left out of the snapshot, which then served the step: a checkpoint that
// could not bring them back, and no word of the full disk.
func TestFullCheckpointsDiskInGitFailsTheStep(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e, startFiles)
	shadows := filepath.Join(e.dataDir(), "checkpoints")
	smallDisk(t, shadows, 40)
	e.withModel(t, threeWritingTurns())
	e.ok("run", "--allow", "edit", "turn 0")

	// 17 files (more than a snapshot writes itself) of 1.25 MiB that do
	// not compress, each a blob larger than the 1 MiB left on the disk
	// (and all of them fitting once the filler is gone).
	noise := make([]byte, 5<<18)
	for i := range 17 {
		rand.Read(noise)
		if err := os.WriteFile(filepath.Join(e.workspace, fmt.Sprintf("data%02d.bin", i)), noise, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	filler := fill(t, shadows, 1<<20)
	out, errs, code := e.run("run", "--allow", "edit", "turn 1")
	if code == 0 || !strings.Contains(errs, "disk full") || !strings.Contains(errs, "No space left on device") || strings.Contains(errs, "panic") {
		t.Fatalf("a turn whose checkpoint git cannot write on the disk: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "git hash-object") {
		t.Fatalf("the failure did not come from git (the test no longer reaches git's path):\n%s", errs)
	}
	t.Logf("on a full disk: %s", errs)
	if _, err := os.Stat(filepath.Join(e.workspace, "new1.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the step ran without its snapshot (new1.txt: %v)", err)
	}
	// git leaves the part of an object it could not finish; those would
	// hold the space the user frees.
	if left, _ := filepath.Glob(filepath.Join(shadows, "*", "objects", "*", "tmp_obj_*")); len(left) > 0 {
		t.Fatalf("git's unfinished objects were left in the shadow: %v", left)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.ok("run", "--allow", "edit", "turn 2")
	id := sessionIn(e.ok("sessions", "list", "--json", "-n", "1"))
	preview := e.ok("sessions", "revert", id, "--preview")
	if !strings.Contains(preview, "new2.txt") || strings.Contains(preview, "not restorable") {
		t.Fatalf("the turn after space was freed: its snapshot should revert new2.txt and hold the data files:\n%s", preview)
	}
}
