package store_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// The tests in this file run the test binary again as separate processes
// (see TestMain) that use one data directory at the same time, as two editor
// windows and a shell would.

const childEnv = "DARMAN_STORE_TEST_CHILD"

// TestMain is a writer process (child) when childEnv says so; as the
// tests, it fails them if a goroutine outlives them: a closed store has
// stopped badger and its own writers.
func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role == "stream" {
		os.Exit(streamer(os.Args[len(os.Args)-2:]))
	} else if role == "sessions" {
		os.Exit(writeSessions(os.Args[len(os.Args)-2:]))
	} else if role == "move" {
		os.Exit(moveChild(os.Args[len(os.Args)-2:]))
	} else if role == "fold" {
		os.Exit(foldChild(os.Args[len(os.Args)-2]))
	} else if role == "gone" {
		os.Exit(gone(os.Args[len(os.Args)-2]))
	} else if role != "" {
		os.Exit(child(role, os.Args[len(os.Args)-2:]))
	}
	goleak.VerifyTestMain(m)
}

// child is a writer process: it opens the store in args[0], says whether it
// owns it, then writes args[1] messages of two parts each to a session of its
// own, printing "ack N" after each acknowledged message and listing sessions
// now and then. With args[1] = "0" it writes until killed. It stops early
// when a line arrives on stdin, and then closes the store.
func child(role string, args []string) int {
	ctx := context.Background()
	s, err := store.Open(ctx, args[0], store.Options{Wait: 20 * time.Second})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer s.Close()
	fmt.Println("owner", s.Owner())
	stop := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		close(stop)
	}()
	n, _ := strconv.Atoi(args[1])
	sess := agent.Session{ID: agent.NewSessionID(), Workspace: "/w", Title: role, Created: time.Now(), Updated: time.Now()}
	if err := s.PutSession(ctx, sess); err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("session", sess.ID)
	for i := 0; n == 0 || i < n; i++ {
		select {
		case <-stop:
			fmt.Println("stopped")
			return 0
		default:
		}
		m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: time.Now()}
		if err := s.PutMessage(ctx, m); err != nil {
			fmt.Println("error", err)
			return 1
		}
		for j := range 2 {
			p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartText, Text: fmt.Sprintf("%s %d.%d", role, i, j)}
			if err := s.PutPart(ctx, p); err != nil {
				fmt.Println("error", err)
				return 1
			}
		}
		if i%25 == 0 {
			if _, err := s.ListSessions(ctx, store.ListOptions{}); err != nil {
				fmt.Println("error", err)
				return 1
			}
		}
		fmt.Println("ack", i, m.ID)
	}
	fmt.Println("done")
	return 0
}

// proc is a running child and the lines it printed.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	acked []string // message IDs, in order
	sess  agent.ID
}

func start(t *testing.T, role, dir string, n int) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", dir, strconv.Itoa(n))
	cmd.Env = append(os.Environ(), childEnv+"="+role)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdin: stdin, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return p
}

// until reads the child's lines until one starts with prefix, recording
// acknowledgements on the way. It fails the test on an error line, on the
// child's exit, or after a minute.
func (p *proc) until(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("the child exited before printing %q", prefix)
			}
			p.record(line)
			if strings.HasPrefix(line, "error") {
				t.Fatalf("child: %s", line)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-timeout:
			t.Fatalf("no %q from the child within a minute", prefix)
		}
	}
}

func (p *proc) record(line string) {
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "ack" && agent.ID(f[2]).Validate(agent.MessagePrefix) == nil:
		// A line a kill cut short is the last the child printed, whose
		// write it may not have finished: only a whole ID was
		// acknowledged.
		p.acked = append(p.acked, f[2])
	case len(f) == 2 && f[0] == "session":
		p.sess = agent.ID(f[1])
	}
}

// checkAcked fails unless every message p saw acknowledged is in the store
// with both its parts.
func checkAcked(t *testing.T, s *store.Store, p *proc) {
	t.Helper()
	msgs, err := s.Messages(context.Background(), p.sess)
	if err != nil {
		t.Fatal(err)
	}
	have := map[agent.ID]int{}
	for _, m := range msgs {
		have[m.Message.ID] = len(m.Parts)
	}
	for _, id := range p.acked {
		if parts, ok := have[agent.ID(id)]; !ok || parts != 2 {
			t.Errorf("acknowledged message %s: present %v with %d parts", id, ok, parts)
		}
	}
	sess, err := s.Session(context.Background(), p.sess)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Messages != len(msgs) {
		t.Errorf("session %s counts %d messages but holds %d", p.sess, sess.Messages, len(msgs))
	}
}

// TestThreeProcessesShareOneStore runs three writers on one data directory;
// the first owns it and leaves half-way, so the other two must hand over
// between them without losing a write.
func TestThreeProcessesShareOneStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	a := start(t, "a", dir, 0)
	if line := a.until(t, "owner"); line != "owner true" {
		t.Fatalf("first process: %s", line)
	}
	b := start(t, "b", dir, 400)
	c := start(t, "c", dir, 400)
	for _, p := range []*proc{b, c} {
		if line := p.until(t, "owner"); line != "owner false" {
			t.Fatalf("later process: %s", line)
		}
		p.until(t, "ack 50 ")
	}
	// The owner leaves while the other two are writing.
	fmt.Fprintln(a.stdin, "stop")
	a.until(t, "stopped")
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("the owner did not close cleanly: %v", err)
	}
	for _, p := range []*proc{b, c} {
		p.until(t, "done")
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("a writer failed after the handover: %v", err)
		}
	}
	if len(b.acked) != 400 || len(c.acked) != 400 {
		t.Fatalf("acknowledged: b %d, c %d, want 400 each", len(b.acked), len(c.acked))
	}

	s := open(t, dir)
	for _, p := range []*proc{a, b, c} {
		checkAcked(t, s, p)
	}
	list, err := s.ListSessions(context.Background(), store.ListOptions{})
	if err != nil || len(list) != 3 {
		t.Fatalf("sessions after the run: %d, %v", len(list), err)
	}
}

// TestKilledWriterLosesNothingAcknowledged kills a writer with SIGKILL in
// the middle of its writes, then reopens the store.
func TestKilledWriterLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	w := start(t, "w", dir, 0)
	w.until(t, "owner true")
	w.until(t, "ack 300 ")
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for line := range w.lines { // acknowledgements printed before the kill
		w.record(line)
	}
	w.cmd.Wait()

	s := open(t, dir)
	if !s.Owner() {
		t.Fatal("the killed owner's lock was not released")
	}
	checkAcked(t, s, w)
}

// TestKilledOwnerHandsOver kills the owning process while a client writes;
// the client takes over and its writes all land.
func TestKilledOwnerHandsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	a := start(t, "a", dir, 0)
	a.until(t, "owner true")
	b := start(t, "b", dir, 300)
	b.until(t, "owner false")
	b.until(t, "ack 100 ")
	a.cmd.Process.Signal(syscall.SIGKILL)
	a.cmd.Wait()
	for line := range a.lines {
		a.record(line)
	}
	b.until(t, "done")
	if err := b.cmd.Wait(); err != nil {
		t.Fatalf("the client failed after the owner was killed: %v", err)
	}
	s := open(t, dir)
	checkAcked(t, s, a)
	checkAcked(t, s, b)
}
