package main_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// After a turn that changed files, doctor names how snapshots find what
// changed (on Linux, the inotify watcher and its limit) and how much the
// workspace's snapshots take against their bound.
func TestDoctorReportsCheckpoints(t *testing.T) {
	e := newEnv(t)
	gitRepo(t, e, startFiles)
	e.withModel(t, threeEditsAndABash())
	if out, errs, code := e.run("run", "--allow", "edit", "--allow", "bash", "change the files"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	var r struct {
		Checks []struct{ Section, Name, Status, Detail string }
	}
	out, _, _ := e.run("doctor", "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, c := range r.Checks {
		if c.Name != "checkpoints" {
			continue
		}
		if c.Section != "data" || strings.Contains(c.Detail, " 0 B of snapshots") || !strings.Contains(c.Detail, "of snapshots for "+e.workspace) || !strings.Contains(c.Detail, "bound 2.0 GiB") {
			t.Errorf("checkpoints: %+v", c)
		}
		if runtime.GOOS == "linux" && (c.Status != "ok" || !strings.Contains(c.Detail, "file watcher: inotify") || !strings.Contains(c.Detail, "max_user_watches = ")) {
			t.Errorf("on Linux the watcher and its limit: %+v", c)
		}
		return
	}
	t.Fatalf("doctor has no checkpoints line:\n%s", out)
}
