package main_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
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
		now, _ := filepath.Glob(filepath.Join(e.storeDir(), "*.sst"))
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
		if code != 1 || !strings.Contains(errs, e.dataDir()) || !strings.Contains(errs, "darman sessions repair") ||
			strings.Contains(errs, "panic") || strings.Contains(errs, "goroutine") {
			t.Errorf("darman %s on a damaged store: exit %d\n%s", strings.Join(args, " "), code, errs)
		}
	}
	out, _, code := e.run("doctor")
	if code != 1 || !strings.Contains(out, "✗ "+e.storeDir()+": the session store in "+e.storeDir()+" is damaged") ||
		!strings.Contains(out, filepath.Base(tables[1])) || !strings.Contains(out, "darman sessions repair") {
		t.Errorf("doctor on a damaged store: exit %d\n%s", code, out)
	}

	// (doctor's exit code also counts the missing model, on main since
	// the trust merge: the repair's lines are what is checked.)
	out, _, code = e.run("doctor", "--repair")
	if !strings.Contains(out, "! repair: moved the damaged store to "+e.dataDir()+".damaged-") ||
		!strings.Contains(out, "read back 2 sessions") || !strings.Contains(out, "✓ "+e.dataDir()+": 2 sessions") {
		t.Fatalf("doctor --repair: exit %d\n%s", code, out)
	}
	// The cut table's session came back from the journal.
	for _, id := range ids {
		if show := e.ok("sessions", "show", id); !strings.Contains(show, "Why does TestFoo fail?") {
			t.Errorf("session %s after the repair:\n%s", id, show)
		}
	}
	if out, _, _ := e.run("doctor", "--repair"); !strings.Contains(out, "✓ repair: the session store is sound") {
		t.Errorf("repairing a sound store:\n%s", out)
	}
}

// TestCutManifestIsRefusedTouchingNothingAndRepaired cuts the store's
// MANIFEST (badger's list of its tables) as a crash, a sync tool or a
// half-copied backup would: to nothing, in the middle of a record, and
// at a record boundary, which badger reads as a shorter, valid list. The
// commands that read refuse with the damage and the command that fixes
// it, and leave every byte of the store as it was (badger would have
// deleted the tables missing from the list: "No sessions yet", exit 0);
// `darman sessions repair` then brings every session back, and says the
// store is sound when run again.
func TestCutManifestIsRefusedTouchingNothingAndRepaired(t *testing.T) {
	for _, cut := range []string{"zero", "half", "boundary"} {
		t.Run(cut, func(t *testing.T) {
			e := newEnv(t)
			var ids []string
			// Two sessions, imported by two darman processes: the second
			// start records a table of its own in the manifest.
			for i := range 2 {
				fixture := exportFixture(e.workspace)
				fixture.Session.Title = fmt.Sprintf("session %d", i)
				raw, _ := json.Marshal(fixture)
				path := filepath.Join(e.home, fmt.Sprintf("s%d.json", i))
				os.WriteFile(path, raw, 0o600)
				e.ok("sessions", "import", path)
				ids = append(ids, string(fixture.Session.ID))
			}
			manifest := filepath.Join(e.storeDir(), "MANIFEST")
			raw, err := os.ReadFile(manifest)
			if err != nil {
				t.Fatal(err)
			}
			var size int
			switch cut {
			case "zero":
			case "half":
				size = len(raw) / 2
			case "boundary":
				// The end of the manifest's first record: the tables
				// recorded after it are left out of the list.
				size = 8 + 8 + int(binary.BigEndian.Uint32(raw[8:]))
				if size >= len(raw) {
					t.Fatalf("the manifest has one record (%d bytes)", len(raw))
				}
			}
			os.WriteFile(manifest, raw[:size], 0o600)
			before := storeFiles(t, e.storeDir())

			for _, args := range [][]string{{"sessions", "list"}, {"sessions", "show", ids[0]}, {"sessions", "export", ids[1]}} {
				out, errs, code := e.run(args...)
				if code != 1 || !strings.Contains(errs, "damaged") || !strings.Contains(errs, "MANIFEST") ||
					!strings.Contains(errs, "darman sessions repair") || strings.Contains(out+errs, "No sessions yet") {
					t.Errorf("darman %s with a cut manifest: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
				}
			}
			out, _, code := e.run("doctor")
			if code != 1 || !strings.Contains(out, "✗ "+e.storeDir()+": the session store in "+e.storeDir()+" is damaged") {
				t.Errorf("doctor with a cut manifest: exit %d\n%s", code, out)
			}
			if after := storeFiles(t, e.storeDir()); !mapsEqual(before, after) {
				t.Fatalf("the damaged store changed on disk:\nbefore %v\nafter  %v", before, after)
			}

			out = e.ok("sessions", "repair")
			if !strings.Contains(out, "moved the damaged store to "+e.dataDir()+".damaged-") || !strings.Contains(out, "read back 2 sessions") {
				t.Fatalf("sessions repair:\n%s", out)
			}
			aside := strings.Fields(strings.TrimPrefix(out[strings.Index(out, "moved the damaged store to "):], "moved the damaged store to "))[0]
			if kept := storeFiles(t, aside); !mapsEqual(before, kept) {
				t.Errorf("the store moved aside is not the damaged store as it was:\nbefore %v\naside  %v", before, kept)
			}
			list := e.ok("sessions", "list")
			for i, id := range ids {
				if !strings.Contains(list, id) || !strings.Contains(list, fmt.Sprintf("session %d", i)) {
					t.Errorf("session %s is not listed after the repair:\n%s", id, list)
				}
				if show := e.ok("sessions", "show", id); !strings.Contains(show, "Why does TestFoo fail?") {
					t.Errorf("session %s after the repair:\n%s", id, show)
				}
			}
			if out := e.ok("sessions", "repair"); !strings.Contains(out, "is sound: nothing to repair") {
				t.Errorf("repairing the repaired store:\n%s", out)
			}
		})
	}
}

// storeDir is the directory of badger's files in the data directory.
func (e *env) storeDir() string { return filepath.Join(e.dataDir(), "store") }

// storeFiles maps each of badger's files in dir to a hash of its bytes.
func storeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".vlog") || strings.HasSuffix(name, ".mem") ||
			strings.HasPrefix(name, "MANIFEST") || strings.HasPrefix(name, "KEYREGISTRY")) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(bytes.TrimRight(raw, "\x00"))
		out[name] = fmt.Sprintf("%d:%x", len(raw), sum[:6])
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestFlippedBitInATableIsRefusedAndRepaired flips one bit in the middle
// of a table's blocks, as a bad disk block would. badger checks a block
// only when it reads it, and its iterators end, without an error, at one
// that does not match its checksum: `darman sessions show` printed the
// session without the messages after the block, exit 0, and a darman
// compacting the table would have written the shorter session for good.
// The open-time check now reads every block (of a table not read since
// it was made, or whose bytes changed since: see agent/store's
// readTableFile), so the commands refuse, touching nothing, and the
// repair brings every message back.
func TestFlippedBitInATableIsRefusedAndRepaired(t *testing.T) {
	e := newEnv(t)
	fixture := exportFixture(e.workspace)
	at := fixture.Messages[0].Message.Created
	for i := range 300 {
		m := agent.Message{ID: agent.NewMessageID(), SessionID: fixture.Session.ID, Role: agent.RoleAssistant, Created: at.Add(time.Duration(i) * time.Second), Finish: agent.FinishStop}
		p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: m.SessionID, Kind: agent.PartText,
			Text: fmt.Sprintf("answer %d: %x", i, sha256.Sum256([]byte(strconv.Itoa(i))))}
		fixture.Messages = append(fixture.Messages, agent.MessageWithParts{Message: m, Parts: []agent.Part{p}})
	}
	raw, _ := json.Marshal(fixture)
	e.ok("sessions", "import", e.write("s.json", string(raw)))
	id := string(fixture.Session.ID)
	whole := func(show string) bool {
		for i := range 300 {
			if !strings.Contains(show, fmt.Sprintf("answer %d: ", i)) {
				return false
			}
		}
		return true
	}
	if !whole(e.ok("sessions", "show", id)) {
		t.Fatal("the imported session does not show whole")
	}
	tables, _ := filepath.Glob(filepath.Join(e.storeDir(), "*.sst"))
	if len(tables) != 1 {
		t.Fatalf("tables: %v", tables)
	}
	tbl, err := os.ReadFile(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	// The blocks end where the index begins: the footer is the index,
	// its length, the checksum and its length.
	end := len(tbl) - 4
	end -= int(binary.BigEndian.Uint32(tbl[end:])) + 4
	end -= int(binary.BigEndian.Uint32(tbl[end:]))
	if end < 16<<10 {
		t.Fatalf("the table's blocks are %d bytes: too few to damage one in the middle", end)
	}
	tbl[end/2] ^= 0x10
	if err := os.WriteFile(tables[0], tbl, 0o600); err != nil {
		t.Fatal(err)
	}
	before := storeFiles(t, e.storeDir())

	for _, args := range [][]string{{"sessions", "show", id}, {"sessions", "export", id}, {"sessions", "list"}} {
		out, errs, code := e.run(args...)
		if code != 1 || !strings.Contains(errs, "damaged") || !strings.Contains(errs, filepath.Base(tables[0])) ||
			!strings.Contains(errs, "darman sessions repair") {
			t.Errorf("darman %s with a bit flipped in a table: exit %d (%d bytes out)\n%s", strings.Join(args, " "), code, len(out), errs)
		}
	}
	if after := storeFiles(t, e.storeDir()); !mapsEqual(before, after) {
		t.Fatalf("the damaged store changed on disk:\nbefore %v\nafter  %v", before, after)
	}
	out := e.ok("sessions", "repair")
	if !strings.Contains(out, "moved the damaged store to "+e.dataDir()+".damaged-") {
		t.Fatalf("sessions repair:\n%s", out)
	}
	if !whole(e.ok("sessions", "show", id)) {
		t.Errorf("after the repair the session is not whole:\n%s", out)
	}
	if out := e.ok("sessions", "repair"); !strings.Contains(out, "is sound: nothing to repair") {
		t.Errorf("repairing the repaired store:\n%s", out)
	}
}
