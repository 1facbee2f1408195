package store_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// A store whose directory is removed under it (a test's home cleaned up
// while its darman stops, a data directory deleted by hand) still closes:
// badger's Close retries its failed flush for ever, and darman, waiting
// for it, would never exit. The store is a child process's (role
// "gone"), since what badger leaves running is the child's to end.
func TestCloseOfAStoreWhoseDirectoryIsGone(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$", dir, "0")
	cmd.Env = append(os.Environ(), childEnv+"=gone")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("a store without its directory did not close in a minute:\n%s", out)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "closed: the session store in "+store.DatabaseDir(dir)+" did not close within 2s") {
		t.Fatalf("Close of a store without its directory said:\n%s\nwant that it did not close, naming %s", out, dir)
	}
}

// gone opens the store in dir, writes to it, removes dir and closes the
// store, printing what Close said.
func gone(dir string) int {
	store.SetCloseWait(2 * time.Second)
	ctx := context.Background()
	s, err := store.Open(ctx, dir, store.Options{})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	if err := s.PutSession(ctx, agent.Session{ID: agent.NewSessionID(), Workspace: "/w", Created: time.Now(), Updated: time.Now()}); err != nil {
		fmt.Println("error", err)
		return 1
	}
	if err := os.RemoveAll(dir); err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("closed:", s.Close())
	return 0
}
