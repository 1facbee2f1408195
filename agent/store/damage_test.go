package store_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// streamer is a writer process that streams answers as a turn does: each
// message's text part is put empty, grown by appends, then put whole; every
// third message also gets a tool call whose output (8 KiB) goes to badger's
// value log. It prints "session ID", then "ack N ID" after each message is
// whole, until a line arrives on stdin (then it closes the store) or it is
// killed. args: the data directory, and the session to continue ("" for a
// new one).
func streamer(args []string) int {
	ctx := context.Background()
	s, err := store.Open(ctx, args[0], store.Options{Wait: 20 * time.Second})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer s.Close()
	stop := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		close(stop)
	}()
	sess := agent.Session{ID: agent.NewSessionID(), Workspace: "/w", Title: "streamed", Created: t0, Updated: t0}
	if err := s.PutSession(ctx, sess); err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("session", sess.ID)
	for i := 0; ; i++ {
		select {
		case <-stop:
			fmt.Println("stopped")
			return 0
		default:
		}
		if err := streamMessage(ctx, s, sess.ID, i); err != nil {
			fmt.Println("error", err)
			return 1
		}
	}
}

// streamedText is the text of message i of a streamer, in its chunks.
func streamedText(i int) []string {
	var out []string
	for c := range 4 {
		out = append(out, fmt.Sprintf("answer %d, chunk %d: %s\n", i, c, strings.Repeat("streamed words ", 8)))
	}
	return out
}

func streamedOutput(i int) string {
	return fmt.Sprintf("output of call %d\n%s", i, strings.Repeat("a line of a long command output\n", 256))
}

func streamMessage(ctx context.Context, s *store.Store, sess agent.ID, i int) error {
	m := agent.Message{ID: agent.NewMessageID(), SessionID: sess, Role: agent.RoleAssistant, Created: t0.Add(time.Duration(i) * time.Second)}
	if err := s.PutMessage(ctx, m); err != nil {
		return err
	}
	p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess, Kind: agent.PartText}
	if err := s.PutPart(ctx, p); err != nil {
		return err
	}
	chunks := streamedText(i)
	for c, text := range chunks {
		// A model streams: a chunk every few milliseconds at most.
		time.Sleep(time.Millisecond)
		if err := s.AppendPart(ctx, p, c+1, text); err != nil {
			return err
		}
	}
	p.Text = strings.Join(chunks, "")
	if err := s.PutPart(ctx, p); err != nil {
		return err
	}
	if i%3 == 0 {
		tool := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess, Kind: agent.PartTool,
			Tool: &agent.ToolCall{CallID: "c" + strconv.Itoa(i), Name: "bash", Status: agent.ToolCompleted, Output: streamedOutput(i)}}
		if err := s.PutPart(ctx, tool); err != nil {
			return err
		}
	}
	fmt.Println("ack", i, m.ID)
	return nil
}

// checkStreamed fails unless every message p saw acknowledged is in s whole.
// It returns the first error reading the store.
func checkStreamed(t *testing.T, s *store.Store, p *proc) error {
	t.Helper()
	msgs, err := s.Messages(context.Background(), p.sess)
	if err != nil {
		return err
	}
	have := map[agent.ID]agent.MessageWithParts{}
	for _, m := range msgs {
		have[m.Message.ID] = m
	}
	for i, id := range p.acked {
		m, ok := have[agent.ID(id)]
		if !ok {
			t.Errorf("acknowledged message %d (%s) is missing", i, id)
			continue
		}
		want := strings.Join(streamedText(i), "")
		if len(m.Parts) == 0 || m.Parts[0].Text != want {
			t.Errorf("acknowledged message %d (%s): its text is not whole: %+v", i, id, m.Parts)
		}
		if i%3 == 0 && (len(m.Parts) != 2 || m.Parts[1].Tool == nil || m.Parts[1].Tool.Output != streamedOutput(i)) {
			t.Errorf("acknowledged message %d (%s): its tool call's output is not whole", i, id)
		}
	}
	return nil
}

// fixture is a data directory written by three darman runs (so several
// tables and value logs), with what a reader must find in it.
type fixture struct {
	dir      string
	want     []store.Export
	earlier  string // a copy of the directory taken while the last run wrote
	streamed []*proc
}

func makeFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), earlier: t.TempDir()}
	for run := range 3 {
		s := open(t, f.dir)
		e := conversation(t, s, "/w", 4)
		// A big tool output, which badger keeps in the value log.
		m := agent.Message{ID: agent.NewMessageID(), SessionID: e.Session.ID, Role: agent.RoleAssistant, Created: t0.Add(time.Hour)}
		ctx := context.Background()
		if err := s.PutMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		tool := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: e.Session.ID, Kind: agent.PartTool,
			Tool: &agent.ToolCall{CallID: "c", Name: "bash", Status: agent.ToolCompleted, Output: streamedOutput(run)}}
		if err := s.PutPart(ctx, tool); err != nil {
			t.Fatal(err)
		}
		if run == 2 {
			copyDir(t, f.dir, f.earlier)
			conversation(t, s, "/w", 1)
		}
		s.Close()
	}
	s := open(t, f.dir)
	list, err := s.ListSessions(context.Background(), store.ListOptions{Children: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, sess := range list {
		e, err := s.Export(context.Background(), sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		f.want = append(f.want, *e)
	}
	s.Close()
	return f
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			// The journal.
			must(os.MkdirAll(filepath.Join(to, e.Name()), 0o700))
			copyDir(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
			continue
		}
		if !e.Type().IsRegular() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// fileKind names the files of one kind in a data directory.
type fileKind struct {
	name  string
	files func(dir string) []string
}

// glob names the files of a kind in the data directory (owner) or in
// badger's directory in it (the database's).
func glob(pattern string) func(string) []string {
	return func(dir string) []string {
		if pattern != "owner.lock" && pattern != "owner.sock" {
			dir = store.DatabaseDir(dir)
		}
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		slices.Sort(m)
		return m
	}
}

var fileKinds = []fileKind{
	{"MANIFEST", glob("MANIFEST")},
	{"KEYREGISTRY", glob("KEYREGISTRY")},
	{".sst", glob("*.sst")},
	{".vlog", glob("*.vlog")},
	{"DISCARD", glob("DISCARD")},
	{"owner.lock", glob("owner.lock")},
	{"owner.sock", glob("owner.sock")},
}

// A damage does something to a file, or says why it cannot.
type damage struct {
	name string
	do   func(path, earlier string) (skip string)
}

var damages = []damage{
	{"deleted", func(p, _ string) string { must(os.Remove(p)); return "" }},
	{"truncated to zero", func(p, _ string) string { return truncate(p, 0) }},
	{"truncated at half", func(p, _ string) string { return truncate(p, size(p)/2) }},
	{"truncated at a record boundary", func(p, _ string) string {
		at := recordBoundary(p)
		if at < 0 {
			return "no records"
		}
		return truncate(p, at)
	}},
	{"4 KiB block zeroed", func(p, _ string) string {
		n := size(p)
		if n == 0 {
			return "empty"
		}
		off := n / 2 / 4096 * 4096
		zero := make([]byte, min(4096, n-off))
		writeAt(p, zero, off)
		return ""
	}},
	{"one bit flipped", func(p, _ string) string {
		n := size(p)
		if n == 0 {
			return "empty"
		}
		b := make([]byte, 1)
		readAt(p, b, n/2)
		b[0] ^= 0x10
		writeAt(p, b, n/2)
		return ""
	}},
	{"older copy put back", func(p, earlier string) string {
		at := earlier
		if filepath.Base(filepath.Dir(p)) == filepath.Base(store.DatabaseDir(p)) {
			at = store.DatabaseDir(earlier)
		}
		old, err := os.ReadFile(filepath.Join(at, filepath.Base(p)))
		if err != nil {
			return "no older copy (the file is newer)"
		}
		now, _ := os.ReadFile(p)
		if string(trimZeros(old)) == string(trimZeros(now)) {
			return "the older copy is the same bytes (never rewritten)"
		}
		must(os.WriteFile(p, old, 0o600))
		return ""
	}},
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func size(p string) int64 {
	info, err := os.Stat(p)
	must(err)
	return info.Size()
}

func truncate(p string, n int64) string {
	if info, _ := os.Lstat(p); info != nil && info.Mode()&os.ModeSocket != 0 {
		return "a socket has no bytes"
	}
	if size(p) == 0 {
		return "empty"
	}
	must(os.Truncate(p, n))
	return ""
}

func writeAt(p string, b []byte, off int64) {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	must(err)
	_, err = f.WriteAt(b, off)
	must(err)
	must(f.Close())
}

func readAt(p string, b []byte, off int64) {
	f, err := os.Open(p)
	must(err)
	_, err = f.ReadAt(b, off)
	must(err)
	must(f.Close())
}

func trimZeros(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// recordBoundary is where a file's first record ends, for the kinds that
// have records: the manifest's first change set, a value log's first
// entry, a table's data blocks (before its index), the key registry's IV,
// the discard stats' first pair. -1 for the others.
func recordBoundary(p string) int64 {
	if info, _ := os.Lstat(p); info == nil || info.Mode()&os.ModeSocket != 0 || info.Size() == 0 {
		return -1
	}
	name := filepath.Base(p)
	var raw []byte
	if strings.HasSuffix(name, ".vlog") {
		// The first entry only: the value log being written is
		// preallocated (128 MiB, mostly a hole), and reading it whole
		// took seconds under the race detector, while the writer
		// streamed on past the journal's window (see TestDamageMatrix).
		raw = make([]byte, min(size(p), 1<<20))
		f, err := os.Open(p)
		must(err)
		_, err = io.ReadFull(f, raw)
		f.Close()
		must(err)
	} else {
		var err error
		raw, err = os.ReadFile(p)
		must(err)
	}
	switch {
	case name == "MANIFEST":
		if len(raw) < 16 {
			return -1
		}
		return 16 + int64(binary.BigEndian.Uint32(raw[8:]))
	case strings.HasSuffix(name, ".vlog"):
		if len(trimZeros(raw)) <= 20 {
			return -1
		}
		b := raw[20:]
		n := 2
		var lens [3]uint64
		for i := range lens {
			v, k := binary.Uvarint(b[n:])
			lens[i], n = v, n+k
		}
		return 20 + int64(n) + int64(lens[0]+lens[1]) + 4
	case strings.HasSuffix(name, ".sst"):
		end := len(raw) - 4
		end -= int(binary.BigEndian.Uint32(raw[end:]))
		end -= 4
		return int64(end - int(binary.BigEndian.Uint32(raw[end:])))
	case name == "KEYREGISTRY":
		return 16
	case name == "DISCARD":
		return 16
	}
	return -1
}

// hashes maps each of the database's files in a data directory to its
// size and a hash of its bytes (aside: in a repair's directory aside).
func hashes(t *testing.T, dataDir string, aside bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	dir := dataDir
	if !aside {
		dir = store.DatabaseDir(dataDir)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == "owner.lock" || e.Name() == "LOCK" || strings.HasPrefix(e.Name(), "store.witness") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		sum := sha256.Sum256(raw)
		out[e.Name()] = fmt.Sprintf("%d:%x", len(raw), sum[:6])
	}
	return out
}

// readAll reads every session of f from the store in dir; it returns the
// first read error, and fails the test on any difference.
func readAll(t *testing.T, dir string, want []store.Export, streamed []*proc, readOnly bool) error {
	t.Helper()
	s, err := store.Open(context.Background(), dir, store.Options{ReadOnly: readOnly, Wait: 5 * time.Second})
	if err != nil {
		return err
	}
	defer s.Close()
	for _, w := range want {
		got, err := s.Export(context.Background(), w.Session.ID)
		if err != nil {
			return err
		}
		if !exportsEqual(*got, w) {
			t.Errorf("session %s reads back different from what was written (a silent loss)", w.Session.ID)
		}
	}
	for _, p := range streamed {
		if err := checkStreamed(t, s, p); err != nil {
			return err
		}
	}
	return nil
}

func exportsEqual(a, b store.Export) bool {
	if a.Session.ID != b.Session.ID || len(a.Messages) != len(b.Messages) || len(a.Blobs) != len(b.Blobs) {
		return false
	}
	for i := range a.Messages {
		x, y := a.Messages[i], b.Messages[i]
		if x.Message.ID != y.Message.ID || len(x.Parts) != len(y.Parts) {
			return false
		}
		for j := range x.Parts {
			if x.Parts[j].Text != y.Parts[j].Text || (x.Parts[j].Tool == nil) != (y.Parts[j].Tool == nil) ||
				x.Parts[j].Tool != nil && x.Parts[j].Tool.Output != y.Parts[j].Tool.Output {
				return false
			}
		}
	}
	return true
}

// outcome runs the readers on a damaged directory and repairs it when
// they refuse. It returns what happened, in words for the docs' table.
func outcome(t *testing.T, dir string, want []store.Export, streamed []*proc, tableUnderWriter bool) string {
	t.Helper()
	before := hashes(t, dir, false)
	err := readAll(t, dir, want, streamed, true)
	if err == nil {
		// A read-only open found nothing wrong; darman opening it for
		// writing must still read everything.
		if err = readAll(t, dir, want, streamed, false); err == nil {
			return "opens; everything reads back"
		}
	}
	if errors.Is(err, store.ErrNotFound) && tableUnderWriter {
		// The one loss the readers cannot see: badger's compaction, in
		// the writer, skipped the table's block it could not read. The
		// repair finds the records missing against the journal.
		res, rerr := store.Repair(dir, nil)
		if rerr != nil || !res.Damaged {
			t.Fatalf("repair after records went missing (%v): %+v, %v", err, res, rerr)
		}
		if err := readAll(t, dir, want, streamed, false); err != nil {
			t.Fatalf("after the repair: %v", err)
		}
		return "**records missing from reads** (badger's compaction in the writer skipped the block it could not read, without an error); `darman sessions repair` finds them missing against the journal: everything back"
	}
	if !errors.Is(err, store.ErrDamaged) {
		t.Fatalf("an error that does not say the store is damaged: %v", err)
	}
	if !strings.Contains(err.Error(), "darman sessions repair") {
		t.Errorf("the refusal does not name the repair: %v", err)
	}
	how := "refused at open, nothing touched"
	var open *store.DamageError
	if errors.As(err, &open) && strings.Contains(err.Error(), "a record cannot be read back") || strings.Contains(err.Error(), "is unreadable") {
		how = "opens; a read fails: damaged"
	}
	crashed := false
	for name := range before {
		crashed = crashed || strings.HasSuffix(name, ".mem")
	}
	if after := hashes(t, dir, false); !mapEqual(before, after) {
		if !crashed {
			t.Errorf("the store changed on disk:\nbefore %v\nafter  %v", before, after)
		}
		// The writer left a memtable's log, which the first open cuts
		// to what was written, as after any crash.
		how = "opens (its crash recovery cuts the memtable log); a read fails: damaged"
	}
	if !crashed && !strings.HasPrefix(how, "refused") {
		how += ", nothing touched"
	}
	refusal := err
	beforeRepair := hashes(t, dir, false)
	res, err := store.Repair(dir, nil)
	if err != nil || !res.Damaged {
		t.Fatalf("repair after %v: %+v, %v", refusal, res, err)
	}
	t.Logf("repair: %+v", res)
	if aside := hashes(t, res.Aside, true); !mapEqual(beforeRepair, aside) {
		t.Errorf("the store moved aside is not the damaged store as it was:\nbefore %v\naside  %v", beforeRepair, aside)
	}
	if err := readAll(t, dir, want, streamed, false); err != nil {
		t.Fatalf("after the repair: %v", err)
	}
	if again, err := store.Repair(dir, nil); err != nil || again.Damaged {
		t.Errorf("a second repair: %+v, %v", again, err)
	}
	if len(res.Unrecovered) > 0 {
		// Records of the write in flight when the writer died, never
		// acknowledged (readAll checked every acknowledged one).
		return how + fmt.Sprintf("; repair: everything acknowledged back (%d unacknowledged records reported lost)", len(res.Unrecovered))
	}
	return how + "; repair: everything back"
}

func mapEqual(a, b map[string]string) bool {
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

// TestDamageMatrix damages each kind of the store's files in each way, with
// no darman running and with one darman streaming answers into the store
// when it happens, and checks the outcome: every message back, or a clear
// refusal that leaves every byte of the damaged store on disk followed by a
// repair that brings every acknowledged message back. Set
// DARMAN_DAMAGE_TABLE to a file to get the outcomes as the table in
// docs/sessions.md.
func TestDamageMatrix(t *testing.T) {
	f := makeFixture(t)
	var rows []string
	cell := func(t *testing.T, kind fileKind, d damage, running bool) string {
		dir := t.TempDir()
		copyDir(t, f.dir, dir)
		var p *proc
		var streamed []*proc
		if running {
			p = start(t, "stream", dir, 0)
			p.until(t, "ack 3 ")
			streamed = []*proc{p}
		}
		files := kind.files(dir)
		if kind.name == "owner.lock" || kind.name == "owner.sock" {
			if !running && len(files) == 0 {
				return "n/a: none when no darman runs"
			}
		}
		if len(files) == 0 {
			t.Fatalf("no %s in %s", kind.name, dir)
		}
		var skips []string
		for _, path := range files {
			if skip := d.do(path, f.earlier); skip != "" {
				skips = append(skips, skip)
			}
		}
		if len(skips) == len(files) {
			if p != nil {
				p.stdin.Write([]byte("\n"))
				p.cmd.Wait()
			}
			return "n/a: " + skips[0]
		}
		crashed := ""
		if p != nil {
			// The writer goes on for a few more messages, then stops.
			n := len(p.acked)
			deadline := time.After(5 * time.Second)
		wait:
			for len(p.acked) < n+3 {
				select {
				case line, ok := <-p.lines:
					if !ok {
						break wait
					}
					p.record(line)
					if strings.HasPrefix(line, "error") {
						crashed = "the writer's next write failed (" + strings.TrimPrefix(line, "error ") + ")"
						break wait
					}
				case <-deadline:
					break wait
				}
			}
			p.stdin.Write([]byte("\n"))
			if err := p.cmd.Wait(); err != nil && crashed == "" {
				crashed = "the writer died (" + err.Error() + ")"
			}
			for line := range p.lines {
				p.record(line)
			}
		}
		out := outcome(t, dir, f.want, streamed, running && strings.HasPrefix(kind.name, ".sst"))
		if crashed != "" {
			if strings.Contains(crashed, "signal") {
				// SIGBUS: badger maps its files, and reading a cut
				// file's missing pages kills the process.
				crashed = "the writer was killed by " + crashed[strings.Index(crashed, "signal"):]
			}
			if i := strings.Index(crashed, ": "); i > 0 && len(crashed) > 120 {
				crashed = crashed[:i] + ")"
			}
			out = crashed + "; " + out
		}
		return out
	}
	// Each table and each value log alone, too (the kinds' rows damage
	// all of them at once): the oldest and the newest do not hold the
	// same records, and a damaged one beside sound ones is what a disk's
	// bad block does.
	kinds := slices.Clone(fileKinds)
	for _, kind := range fileKinds {
		if kind.name != ".sst" && kind.name != ".vlog" {
			continue
		}
		for _, path := range kind.files(f.dir) {
			base := filepath.Base(path)
			kinds = append(kinds, fileKind{kind.name + " " + base + " alone", func(dir string) []string {
				p := filepath.Join(store.DatabaseDir(dir), base)
				if _, err := os.Stat(p); err != nil {
					return nil
				}
				return []string{p}
			}})
		}
	}
	for _, kind := range kinds {
		for _, d := range damages {
			for _, running := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/running=%v", kind.name, d.name, running)
				var got string
				t.Run(name, func(t *testing.T) { got = cell(t, kind, d, running) })
				col := "no darman"
				if running {
					col = "darman streaming"
				}
				rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |", kind.name, d.name, col, got))
			}
		}
	}
	if path := os.Getenv("DARMAN_DAMAGE_TABLE"); path != "" {
		table := "| file | damage | when | outcome |\n|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
		must(os.WriteFile(path, []byte(table), 0o644))
	}
}

// TestKillDuringStreamedWrites kills one of three processes streaming
// answers into one store (-9, at a random moment) 200 times, restarting it
// each time, and after each kill checks that every session lists and reads
// and that every message acknowledged so far is whole.
func TestKillDuringStreamedWrites(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(33, 39))
	var procs [3]*proc
	var done []*proc // killed writers, whose acknowledgements must stay
	for i := range procs {
		procs[i] = start(t, "stream", dir, 0)
		procs[i].until(t, "session")
	}
	kills := 200
	if testing.Short() || raceEnabled {
		kills = 40
	}
	for k := range kills {
		i := rng.IntN(3)
		p := procs[i]
		time.Sleep(time.Duration(rng.IntN(15000)) * time.Microsecond)
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.cmd.Wait()
		for line := range p.lines {
			p.record(line)
		}
		done = append(done, p)
		s, err := store.Open(context.Background(), dir, store.Options{Wait: 20 * time.Second})
		if err != nil {
			t.Fatalf("after kill %d: %v", k+1, err)
		}
		list, err := s.ListSessions(context.Background(), store.ListOptions{})
		if err != nil {
			t.Fatalf("after kill %d, listing: %v", k+1, err)
		}
		for _, sess := range list {
			if _, err := s.Messages(context.Background(), sess.ID); err != nil {
				t.Fatalf("after kill %d, reading %s: %v", k+1, sess.ID, err)
			}
		}
		if err := checkStreamed(t, s, p); err != nil {
			t.Fatalf("after kill %d: %v", k+1, err)
		}
		s.Close()
		if t.Failed() {
			t.Fatalf("after kill %d", k+1)
		}
		procs[i] = start(t, "stream", dir, 0)
		procs[i].until(t, "session")
	}
	for _, p := range procs {
		p.stdin.Write([]byte("\n"))
		p.cmd.Wait()
		for line := range p.lines {
			p.record(line)
		}
	}
	s := open(t, dir)
	for _, p := range append(done, procs[:]...) {
		if err := checkStreamed(t, s, p); err != nil {
			t.Fatal(err)
		}
	}
	var acked int
	for _, p := range append(done, procs[:]...) {
		acked += len(p.acked)
	}
	t.Logf("%d kills, %d messages acknowledged, all whole", kills, acked)
}

var _ = io.EOF
