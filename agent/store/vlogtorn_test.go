package store

import (
	"bufio"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
)

// A darman killed (-9) while it copies an entry into the newest value log
// leaves the entry torn the way Go's memmove leaves a copy it did not
// finish: the body (from the first 32-byte boundary on) written, the head
// (the entry's header) and the last 128 bytes still zeros. Badger stops
// reading at the zero header and truncates there, losing nothing that was
// acknowledged; the open-time check read the body after the zeros as
// damage (TestKillDuringStreamedWrites failed so once under load). It is a
// crash's torn tail, not damage: the store opens and everything written
// before is there.
func TestTornValueLogTailIsNotDamage(t *testing.T) {
	dir, jdir := t.TempDir(), t.TempDir()
	l, err := openLocal(dir, jdir, slog.New(slog.DiscardHandler), readWrite)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	sess := agent.Session{ID: agent.NewSessionID(), Workspace: "/w", Title: "t", Created: at, Updated: at}
	msg := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: at}
	// Parts bigger than the value threshold go to the value log.
	text := strings.Repeat("a streamed answer that goes to the value log ", 200)
	var parts []agent.ID
	for _, r := range []*request{{Op: opPutSession, Session: sess}, {Op: opPutMessage, Message: msg}} {
		if resp := l.do(r); resp.err() != nil {
			t.Fatal(resp.err())
		}
	}
	for range 3 {
		p := agent.Part{ID: agent.NewPartID(), MessageID: msg.ID, SessionID: sess.ID, Kind: agent.PartText, Text: text}
		if resp := l.do(&request{Op: opPutPart, Part: p}); resp.err() != nil {
			t.Fatal(resp.err())
		}
		parts = append(parts, p.ID)
	}
	// What a kill leaves: the files as the running process has them
	// (its mapped writes are in the page cache), copied aside.
	crashed := t.TempDir()
	copyFiles(t, dir, crashed)
	l.close()

	vlog := newestVlog(t, crashed)
	raw, err := os.ReadFile(vlog)
	if err != nil {
		t.Fatal(err)
	}
	last, end := lastEntry(t, vlog)
	entry := slices.Clone(raw[last:end])
	if len(entry) < 512 {
		t.Fatalf("the last value-log entry is %d bytes; the test needs one memmove copies in parts", len(entry))
	}
	// The same entry again, after the last, torn as memmove leaves it.
	head := (end&^31 + 32) - end
	torn := make([]byte, len(entry))
	copy(torn[head:len(entry)-128], entry[head:len(entry)-128])
	f, err := os.OpenFile(vlog, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(torn, end); err != nil {
		t.Fatal(err)
	}
	f.Close()

	if _, err := checkStore(crashed); err != nil {
		t.Fatalf("a value log torn by a kill reads as damage: %v", err)
	}
	l, err = openLocal(crashed, t.TempDir(), slog.New(slog.DiscardHandler), readWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	got, err := l.messages(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Parts) != len(parts) {
		t.Fatalf("after the torn tail: %d messages, want 1 with %d parts", len(got), len(parts))
	}
	for _, p := range got[0].Parts {
		if p.Text != text {
			t.Fatalf("part %s came back as %d bytes, want %d", p.ID, len(p.Text), len(text))
		}
	}
}

// copyFiles copies the files of dir (not its subdirectories) into to.
func copyFiles(t *testing.T, dir, to string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func newestVlog(t *testing.T, dir string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if len(logs) == 0 {
		t.Fatal("no value log")
	}
	slices.Sort(logs)
	return logs[len(logs)-1]
}

// lastEntry returns where the last whole entry of a value log begins and
// ends.
func lastEntry(t *testing.T, path string) (start, end int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, _ := f.Stat()
	r := &countReader{r: bufio.NewReader(io.NewSectionReader(f, vlogHeader, info.Size()-vlogHeader)), n: vlogHeader}
	start = -1
	for {
		at := r.n
		e, err := readVlogEntry(r)
		if err != nil || e.zero {
			if start < 0 {
				t.Fatal("the value log holds no entry")
			}
			return start, end
		}
		start, end = at, r.n
	}
}
