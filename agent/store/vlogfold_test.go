package store_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// TestValueLogFilesStayBounded: badger starts a value-log file at every
// open for writing, so each short-lived process that stores a big value
// (a command's 8 KiB output) leaves one; the store folds them after its
// answer, so that their count, which every open and close pays for, stays
// bounded, and every value still reads back.
func TestValueLogFilesStayBounded(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var sessions []agent.ID
	most := 0
	for i := range 60 {
		sessions = append(sessions, bigOutputTurn(t, dir, i))
		most = max(most, valueLogs(t, dir))
	}
	// A fold starts past 16 files; its files go at the next fold.
	if most > 20 {
		t.Errorf("the store kept up to %d value-log files after 60 processes that each stored an 8 KiB value; want at most 20", most)
	}
	s := open(t, dir)
	for i, id := range sessions {
		msgs, err := s.Messages(ctx, id)
		if err != nil || len(msgs) != 1 || len(msgs[0].Parts) != 1 || msgs[0].Parts[0].Text != bigOutputText(i) {
			t.Errorf("process %d's output does not read back (%d messages, %v)", i, len(msgs), err)
		}
	}
}

// foldChild opens the store in dir, says so, and closes it when a line
// arrives on stdin (the close folds its value-log files), saying
// "closing" first.
func foldChild(dir string) int {
	s, err := store.Open(context.Background(), dir, store.Options{GCInterval: -1, Wait: 20 * time.Second})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("owner", s.Owner())
	bufio.NewReader(os.Stdin).ReadString('\n')
	fmt.Println("closing")
	if err := s.Close(); err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("closed")
	return 0
}

// TestKilledFoldLosesNothing kills a process at moments of its close,
// while it folds a store's 30 small value-log files, and reopens the
// store, which must read every value back.
func TestKilledFoldLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	made := t.TempDir()
	restore := store.SetFoldAt(1000)
	var sessions []agent.ID
	for i := range 30 {
		sessions = append(sessions, bigOutputTurn(t, made, i))
	}
	restore()
	if n := valueLogs(t, made); n < 30 {
		t.Fatalf("%d value-log files made, want 30", n)
	}
	killed := 0 // processes killed before their close ended
	for _, wait := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond} {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.CopyFS(dir, os.DirFS(made)); err != nil {
			t.Fatal(err)
		}
		p := start(t, "fold", dir, 0)
		p.until(t, "owner true")
		fmt.Fprintln(p.stdin)
		p.until(t, "closing")
		time.Sleep(wait)
		p.cmd.Process.Signal(syscall.SIGKILL)
		closed := false
		for line := range p.lines {
			closed = closed || line == "closed"
		}
		p.cmd.Wait()
		if !closed {
			killed++
		}
		s, err := store.Open(ctx, dir, store.Options{GCInterval: -1, Wait: 10 * time.Second})
		if err != nil {
			t.Fatalf("killed %s into the folding close: %v", wait, err)
		}
		for i, id := range sessions {
			msgs, err := s.Messages(ctx, id)
			if err != nil || len(msgs) != 1 || len(msgs[0].Parts) != 1 || msgs[0].Parts[0].Text != bigOutputText(i) {
				t.Errorf("killed %s into the folding close: process %d's output does not read back (%d messages, %v)", wait, i, len(msgs), err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if killed == 0 {
		t.Error("every process ended its close before it was killed: no kill fell in a fold")
	}
	t.Logf("%d of 7 processes killed before their close ended", killed)
}
