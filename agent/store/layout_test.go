package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/store"
)

// oldLayout writes a data directory as a darman before DATA/store left
// it: badger's files (and the witness) in the data directory itself,
// beside a checkpoints directory. It returns what the sessions hold.
func oldLayout(t *testing.T, dir string) []store.Export {
	t.Helper()
	s := open(t, dir)
	want := []store.Export{conversation(t, s, "/w", 3), conversation(t, s, "/v", 2)}
	s.Close()
	db := store.DatabaseDir(dir)
	entries, err := os.ReadDir(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		must(os.Rename(filepath.Join(db, e.Name()), filepath.Join(dir, e.Name())))
	}
	must(os.Remove(db))
	must(os.MkdirAll(filepath.Join(dir, "checkpoints", "abc", "objects", "00"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "checkpoints", "abc", "objects", "00", "1234"), []byte("object"), 0o600))
	return want
}

// databaseFiles names the files of badger's kinds directly in dir.
func databaseFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && (strings.HasSuffix(n, ".sst") || strings.HasSuffix(n, ".vlog") || strings.HasSuffix(n, ".mem") ||
			strings.HasPrefix(n, "MANIFEST") || strings.HasPrefix(n, "KEYREGISTRY") || n == "DISCARD" || strings.HasPrefix(n, "store.witness")) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func readsBack(t *testing.T, s *store.Store, want []store.Export) {
	t.Helper()
	for _, w := range want {
		got, err := s.Export(context.Background(), w.Session.ID)
		if err != nil {
			t.Fatalf("session %s: %v", w.Session.ID, err)
		}
		if !reflect.DeepEqual(*got, w) {
			t.Fatalf("session %s reads back different after the move", w.Session.ID)
		}
	}
}

// A store kept in the data directory itself (darman before DATA/store)
// moves into DATA/store at its first open, every session with it, and
// the data directory keeps the rest (the checkpoints) where it was.
func TestOldLayoutMovesIntoItsOwnDirectory(t *testing.T) {
	dir := t.TempDir()
	want := oldLayout(t, dir)
	before := databaseFiles(t, dir)
	if len(before) < 3 {
		t.Fatalf("the old layout has only %v", before)
	}
	s := open(t, dir)
	readsBack(t, s, want)
	s.Close()
	if left := databaseFiles(t, dir); len(left) != 0 {
		t.Fatalf("files of the store left in the data directory: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "checkpoints", "abc", "objects", "00", "1234")); err != nil {
		t.Fatalf("the checkpoints moved: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "store.moving")); !os.IsNotExist(err) {
		t.Fatalf("the move left its directory: %v", err)
	}
}

// A darman killed (-9) in the middle of the move, after each of the files
// it renames in turn and before its last step, leaves a data directory
// that opens with every session: the next start finishes the move.
func TestKilledInTheMiddleOfTheMove(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	fixture := t.TempDir()
	want := oldLayout(t, fixture)
	n := len(databaseFiles(t, fixture))
	for k := 1; k <= n; k++ {
		t.Run(strconv.Itoa(k), func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, fixture, dir)
			cmd := exec.Command(os.Args[0], "-test.run=^$", dir, strconv.Itoa(k))
			cmd.Env = append(os.Environ(), childEnv+"=move")
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed in the move (%v):\n%s", err, out)
			}
			if moved := n - len(databaseFiles(t, dir)); moved != k {
				t.Fatalf("killed after %d renames, want %d", moved, k)
			}
			s := open(t, dir)
			readsBack(t, s, want)
			s.Close()
			if left := databaseFiles(t, dir); len(left) != 0 {
				t.Fatalf("files of the store left in the data directory: %v", left)
			}
		})
	}
}

// moveChild opens the store in dir, an old layout, and kills itself with
// SIGKILL after the move renamed k files.
func moveChild(args []string) int {
	k, _ := strconv.Atoi(args[1])
	store.SetMovedHook(func(n int) {
		if n == k {
			self, _ := os.FindProcess(os.Getpid())
			self.Kill()
			time.Sleep(time.Minute)
		}
	})
	s, err := store.Open(context.Background(), args[0], store.Options{Wait: 10 * time.Second})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	s.Close()
	fmt.Println("not killed")
	return 0
}

// A data directory with a store in DATA/store and an older darman's
// store in the data directory itself is refused, both left untouched.
func TestTwoStoresInOneDataDirectoryAreRefused(t *testing.T) {
	dir := t.TempDir()
	oldLayout(t, dir)
	other := t.TempDir()
	s := open(t, other)
	conversation(t, s, "/x", 1)
	s.Close()
	must(os.Mkdir(store.DatabaseDir(dir), 0o700))
	copyDir(t, store.DatabaseDir(other), store.DatabaseDir(dir))
	before := databaseFiles(t, dir)
	_, err := store.Open(context.Background(), dir, store.Options{Wait: time.Second})
	if err == nil || !strings.Contains(err.Error(), "two session stores") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("opening a data directory with two stores: %v", err)
	}
	if after := databaseFiles(t, dir); !slices.Equal(before, after) {
		t.Fatalf("the old store's files changed: %v, then %v", before, after)
	}
}
