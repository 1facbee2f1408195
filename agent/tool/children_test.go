package tool_test

import (
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
)

// TestBashRecordsItsProcessGroups: every group bash starts is in the
// registry while it runs, leaves it when it is over, and a group still
// running at the end is stopped by the registry's Close.
func TestBashRecordsItsProcessGroups(t *testing.T) {
	reg := &child.Registry{}
	h := newHarness(t, tool.Options{Children: reg})

	h.ok("bash", map[string]any{"command": "echo done"})
	eventually(t, "the finished command to leave the registry", func() bool { return len(reg.Live()) == 0 })

	h.fails("bash", map[string]any{"command": "sleep 60", "timeout": 200})
	if live := reg.Live(); len(live) != 0 {
		t.Fatalf("a timed-out command is still recorded: %+v", live)
	}

	h.ok("bash", map[string]any{"command": "sleep 60", "run_in_background": true})
	live := reg.Live()
	if len(live) != 1 || !strings.Contains(live[0].Name, "sleep 60") {
		t.Fatalf("the background job is not recorded: %+v", live)
	}
	reg.Close(500 * time.Millisecond)
	if child.GroupAlive(live[0].PGID) {
		t.Fatal("Close left the background job running")
	}
}
