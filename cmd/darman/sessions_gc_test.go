package main_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// writeTurns is a script of n conversations ("write file I"), each
// removing the file the one before wrote and writing a file of random bytes
// (in hex): each turn's snapshots add to the workspace's shadow repository
// what only the checkpoints keep.
func writeTurns(n, size int) llmtest.Script {
	var s llmtest.Script
	for i := range n {
		b := make([]byte, size/2)
		rand.Read(b)
		calls := []llmtest.ToolCall{call("write", fmt.Sprintf(`{"path":"gen%d.txt","content":%q}`, i, hex.EncodeToString(b)))}
		if i > 0 {
			calls = append(calls, call("bash", fmt.Sprintf(`{"command":"rm gen%d.txt","description":"remove"}`, i-1)))
		}
		s.Conversations = append(s.Conversations, llmtest.Conversation{Match: fmt.Sprintf("write file %d", i), Steps: []llmtest.Step{
			{ToolCalls: calls}, {Text: "Wrote it."}}})
	}
	return s
}

// storeBytes is the size of badger's tables and value logs.
func storeBytes(t *testing.T, e *env) int64 {
	t.Helper()
	var n int64
	for _, pattern := range []string{"*.sst", "*.vlog"} {
		m, _ := filepath.Glob(filepath.Join(e.storeDir(), pattern))
		for _, p := range m {
			info, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			n += info.Size()
		}
	}
	return n
}

// Maintenance is never on the start path, and still happens: starts of
// darman leave the checkpoints over their new bound and the store's
// tables as they are, and `darman sessions gc` drops the oldest turns'
// snapshots to fit checkpoints.maxBytes and gives back the space of a
// removed session.
func TestSessionsGCPrunesAndCompactsOffTheStartPath(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e, startFiles)
	e.withModel(t, writeTurns(4, 200<<10))
	var ids []string
	for i := range 4 {
		e.ok("run", "--allow", "edit", "--allow", "bash", fmt.Sprintf("write file %d", i))
		out := e.ok("sessions", "list", "--json", "-n", "1")
		id := out[strings.Index(out, "ses_"):]
		ids = append(ids, id[:strings.IndexAny(id, `"`)])
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "gen3.txt")); err != nil {
		t.Fatalf("the turns wrote nothing: %v", err)
	}
	// The user lowers the bound below what the four turns' snapshots take.
	raw, err := os.ReadFile(filepath.Join(e.workspace, "darman.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(raw), `"retry"`, `"checkpoints": {"maxBytes": 300000}, "retry"`, 1)
	e.write("darman.json", cfg)
	e.ok("sessions", "rm", ids[1]) // its turn wrote 400 KB of tool input

	// Starts do none of it.
	e.ok("sessions", "list")
	e.ok("sessions", "revert", ids[0], "--preview")
	before := storeBytes(t, e)
	e.ok("sessions", "list")
	if n := storeBytes(t, e); n < before-100<<10 {
		t.Fatalf("a start gave back the removed session's space (%d → %d bytes)", before, n)
	}

	out := e.ok("sessions", "gc")
	if !strings.Contains(out, "store: 3 sessions") || !strings.Contains(out, "checkpoints of "+e.workspace) ||
		!strings.Contains(out, "dropped the snapshots of the 2 oldest turns") {
		t.Fatalf("sessions gc:\n%s", out)
	}
	if n := storeBytes(t, e); n > before-300<<10 {
		t.Errorf("after gc the store takes %d bytes (before: %d): the removed session's 400 KB are still there", n, before)
	}
	// The oldest turn can no longer be reverted; the newest still can.
	if _, errs, code := e.run("sessions", "revert", ids[0], "--preview"); code == 0 || !strings.Contains(errs, "no turn whose changes to files can be reverted") {
		t.Errorf("reverting the oldest turn after gc: exit %d\n%s", code, errs)
	}
	if out := e.ok("sessions", "revert", ids[3], "--preview"); !strings.Contains(out, "gen3.txt") {
		t.Errorf("the newest turn's revert after gc:\n%s", out)
	}
	// Sessions read back whole after the merge.
	for _, id := range []string{ids[0], ids[2], ids[3]} {
		if show := e.ok("sessions", "show", id); !strings.Contains(show, "Wrote it.") {
			t.Errorf("session %s after gc:\n%s", id, show)
		}
	}
}
