package checkpoint

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A second lockFile on the same store waits for the first to let go, in
// this process (another Keeper) and from another process, and ends its
// wait when its context does.
func TestLockFileWaitsForTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "darman.lock")
	unlock, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	waiting := lockAsync(ctx, path)
	cancel()
	if r := <-waiting; !errors.Is(r.err, context.Canceled) {
		if r.err == nil {
			r.unlock()
		}
		t.Fatalf("a second lock while the first is held: %v, want it to wait until its context is cancelled", r.err)
	}
	next := lockAsync(context.Background(), path)
	unlock()
	r := <-next
	if r.err != nil {
		t.Fatalf("the lock once its holder let go: %v", r.err)
	}
	r.unlock()

	// Another process holds it until its stdin closes.
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "DARMAN_TEST_LOCK="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("the other process did not take the lock: %q, %v", line, err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	waiting = lockAsync(ctx, path)
	cancel()
	if r := <-waiting; !errors.Is(r.err, context.Canceled) {
		if r.err == nil {
			r.unlock()
		}
		t.Fatalf("the lock while another process holds it: %v, want it to wait until its context is cancelled", r.err)
	}
	next = lockAsync(context.Background(), path)
	stdin.Close()
	if r := <-next; r.err != nil {
		t.Fatalf("the lock once the other process let go: %v", r.err)
	} else {
		r.unlock()
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("the other process: %v", err)
	}
}

// TestLockHelperProcess is the other process of TestLockFileWaitsForTheHolder:
// it takes the lock, says so, and holds it until its stdin closes.
func TestLockHelperProcess(t *testing.T) {
	path := os.Getenv("DARMAN_TEST_LOCK")
	if path == "" {
		t.Skip("run by TestLockFileWaitsForTheHolder")
	}
	unlock, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked\n")
	io.Copy(io.Discard, os.Stdin)
	unlock()
}

type lockResult struct {
	unlock func()
	err    error
}

func lockAsync(ctx context.Context, path string) <-chan lockResult {
	ch := make(chan lockResult, 1)
	go func() {
		unlock, err := lockFile(ctx, path)
		ch <- lockResult{unlock, err}
	}()
	return ch
}
