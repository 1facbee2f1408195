//go:build unix

package store_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// TestFirstWriteDoesNotWaitForPacking: a start's first write finds its
// segment made while badger opened, whatever packing the earlier
// processes' segments takes (it reads each, compresses it and syncs it:
// a sync can take tens of milliseconds, and a long session leaves
// megabytes). An earlier segment that cannot be read yet (a FIFO with no
// writer) stands for a packing that takes long: the first write returned
// only once it ended, the spare being queued behind it.
func TestFirstWriteDoesNotWaitForPacking(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	put := func(s *store.Store, title string) error {
		return s.PutSession(ctx, agent.Session{ID: agent.NewSessionID(), Workspace: "/w", Title: title, Created: t0, Updated: t0})
	}
	s, err := store.Open(ctx, dir, store.Options{})
	if err == nil {
		err = put(s, "earlier")
	}
	if err == nil {
		err = s.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	slow := filepath.Join(dir, "journal", "000000000099.jnl")
	if err := syscall.Mkfifo(slow, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	release := func() {
		if f, err := os.OpenFile(slow, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	done := make(chan error, 1)
	go func() {
		var err error
		if s, err = store.Open(ctx, dir, store.Options{}); err == nil {
			err = put(s, "first")
		}
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second): // a liveness bound, not a measure
		t.Error("the open and first write waited for the packing of an earlier process's segment")
	wait: // the packing reads it now, and the write goes on
		for {
			release()
			select {
			case err = <-done:
				break wait
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	for { // the packing ends once the FIFO has had a writer
		release()
		if _, err := os.Lstat(slow); err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
