package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/store"
)

// TestDamagedStoreIsAnErrorAndDoctorRepairsIt cuts a table of the session
// store short, as a full disk or a broken copy would, and runs the
// commands that open the store: each fails with an error naming the data
// directory and the repair (badger would have panicked in a goroutine of
// its own), doctor reports the store as damaged, and doctor --repair moves
// it aside and keeps what can be read.
func TestDamagedStoreIsAnErrorAndDoctorRepairsIt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// Two sessions, each in a table of its own: badger writes one when it
	// closes.
	var ids []string
	var tables []string
	for range 2 {
		s, err := store.Open(ctx, e.dataDir(), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fixture := exportFixture(e.workspace)
		if err := s.Import(ctx, &fixture); err != nil {
			t.Fatal(err)
		}
		s.Close()
		ids = append(ids, string(fixture.Session.ID))
		now, _ := filepath.Glob(filepath.Join(e.dataDir(), "*.sst"))
		for _, p := range now {
			if !strings.Contains(strings.Join(tables, " "), p) {
				tables = append(tables, p)
			}
		}
	}
	if len(tables) != 2 {
		t.Fatalf("tables: %v", tables)
	}
	info, _ := os.Stat(tables[1])
	if err := os.Truncate(tables[1], info.Size()/2); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{{"sessions", "list"}, {"sessions", "show", ids[0]}, {"sessions", "export", ids[0]}} {
		_, errs, code := e.run(args...)
		if code != 1 || !strings.Contains(errs, e.dataDir()) || !strings.Contains(errs, "darman doctor --repair") ||
			strings.Contains(errs, "panic") || strings.Contains(errs, "goroutine") {
			t.Errorf("darman %s on a damaged store: exit %d\n%s", strings.Join(args, " "), code, errs)
		}
	}
	out, _, code := e.run("doctor")
	if code != 1 || !strings.Contains(out, "✗ "+e.dataDir()+": the session store in "+e.dataDir()+" is damaged") ||
		!strings.Contains(out, filepath.Base(tables[1])) || !strings.Contains(out, "darman doctor --repair") {
		t.Errorf("doctor on a damaged store: exit %d\n%s", code, out)
	}

	out, _, code = e.run("doctor", "--repair")
	if code != 0 || !strings.Contains(out, "! repair: moved the damaged store to "+e.dataDir()+".damaged-") ||
		!strings.Contains(out, "read back 1 sessions") || !strings.Contains(out, "✓ "+e.dataDir()+": 1 sessions") {
		t.Fatalf("doctor --repair: exit %d\n%s", code, out)
	}
	if show := e.ok("sessions", "show", ids[0]); !strings.Contains(show, "Why does TestFoo fail?") {
		t.Errorf("the readable session after the repair:\n%s", show)
	}
	if out := e.ok("doctor", "--repair"); !strings.Contains(out, "✓ repair: the session store is sound") {
		t.Errorf("repairing a sound store:\n%s", out)
	}
}
