package lsp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/testenv"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

var fakeLS string

// TestMain builds the fake language server the tests start, and fails
// the package's tests if a goroutine outlives them: a closed client has
// stopped reading.
func TestMain(m *testing.M) {
	testenv.RunWithProgram(m, "github.com/darman-dev/darman/diagnostics/testdata/fakels", &fakeLS)
}

type pipes struct {
	io.Reader
	in io.WriteCloser
}

func (p pipes) Write(b []byte) (int, error) { return p.in.Write(b) }
func (p pipes) Close() error                { return p.in.Close() }

type fake struct {
	cmd  *exec.Cmd
	rwc  pipes
	log  string
	root string
}

func startFake(t *testing.T, args ...string) *fake {
	t.Helper()
	root := t.TempDir()
	f := &fake{log: filepath.Join(root, "fakels.log"), root: root}
	f.cmd = exec.Command(fakeLS, append([]string{"-log", f.log}, args...)...)
	in, err := f.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.rwc = pipes{out, in}
	t.Cleanup(func() {
		f.cmd.Process.Kill()
		f.cmd.Wait()
	})
	return f
}

func connect(t *testing.T, f *fake, opts Options) *Client {
	t.Helper()
	opts.Root = f.root
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, f.rwc, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitLog waits until the fake's log holds every line given.
func waitLog(t *testing.T, f *fake, lines ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(f.log)
		missing := ""
		for _, l := range lines {
			if !strings.Contains(string(b), l) {
				missing = l
				break
			}
		}
		if missing == "" {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake server's log never showed %q; it has:\n%s", missing, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestClientAnswersServerRequests(t *testing.T) {
	f := startFake(t)
	c := connect(t, f, Options{Settings: []byte(`{"fake":{"answer":42}}`)})
	if got := c.ServerInfo().Name; got != "fakels" {
		t.Errorf("ServerInfo().Name = %q", got)
	}
	log := waitLog(t, f,
		"recv initialize", "recv initialized", "recv workspace/didChangeConfiguration",
		"answer workspace/configuration [42,null]",
		"answer workspace/workspaceFolders [{",
		"answer window/workDoneProgress/create null",
		"answer window/showMessageRequest null",
		"answer client/registerCapability null",
		"answer workspace/unknownThing {",
	)
	if !strings.Contains(log, string(URIFromPath(f.root))) {
		t.Errorf("workspaceFolders did not name the root %s:\n%s", f.root, log)
	}
	if !strings.Contains(log, "-32601") {
		t.Errorf("an unknown request was not refused with -32601:\n%s", log)
	}

	sent, err := c.FilesChanged(context.Background(), []FileEvent{{URI: string(URIFromPath(filepath.Join(f.root, "x.go"))), Type: FileChanged}})
	if err != nil || !sent {
		t.Fatalf("FilesChanged after the server registered for them = %v, %v", sent, err)
	}
	waitLog(t, f, "recv workspace/didChangeWatchedFiles")

	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := f.cmd.Wait(); err != nil {
		t.Fatalf("the server did not exit cleanly after shutdown and exit: %v", err)
	}
}

func TestDiagnosticsForTheVersion(t *testing.T) {
	f := startFake(t, "-delay", "150ms")
	c := connect(t, f, Options{})
	ctx := context.Background()
	uri := URIFromPath(filepath.Join(f.root, "a.txt"))

	// Version 1 has an error; version 2, sent before the server answered
	// for version 1, has none. The wait for version 2 must not take the
	// set published for version 1.
	if _, err := c.Sync(ctx, uri, "plaintext", []byte("ok\n😀 ERROR here\n  WARN\n")); err != nil {
		t.Fatal(err)
	}
	v, err := c.Sync(ctx, uri, "plaintext", []byte("all good\n"))
	if err != nil || v != 2 {
		t.Fatalf("second Sync = %d, %v; want version 2", v, err)
	}
	set, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second})
	if err != nil || !set.Fresh || set.Version != 2 {
		t.Fatalf("Diagnostics = %+v, %v; want a fresh set for version 2", set, err)
	}
	if len(set.Items) != 0 {
		t.Fatalf("version 2 got version 1's diagnostics: %+v", set.Items)
	}

	if _, err := c.Sync(ctx, uri, "plaintext", []byte("ok\n😀 ERROR here\n  WARN\n")); err != nil {
		t.Fatal(err)
	}
	set, err = c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second})
	if err != nil || !set.Fresh || len(set.Items) != 2 {
		t.Fatalf("Diagnostics = %+v, %v; want 2 items", set, err)
	}
	e, w := set.Items[0], set.Items[1]
	if e.Severity != SeverityError || e.Code != "EERROR" || e.Range.Start != (Position{Line: 1, Character: 3}) {
		t.Errorf("error item = %+v; want severity 1, code EERROR, at 1:3 (the emoji is two UTF-16 units)", e)
	}
	if w.Severity != SeverityWarning || w.Code != "42" {
		t.Errorf("warning item = %+v; want its numeric code 42 kept", w)
	}
	if e.CodeDescription == nil || e.CodeDescription.HRef != "https://example.com/fakels/EERROR" {
		t.Errorf("error item's codeDescription = %+v; want the server's href", e.CodeDescription)
	}
	wantRel := []protocol.DiagnosticRelatedInformation{{Location: Location{URI: string(uri), Range: Range{End: Position{Line: 0, Character: 2}}}, Message: "the document starts here"}}
	if fmt.Sprint(e.RelatedInformation) != fmt.Sprint(wantRel) {
		t.Errorf("error item's relatedInformation = %+v; want %+v", e.RelatedInformation, wantRel)
	}
	if w.CodeDescription != nil || w.RelatedInformation != nil {
		t.Errorf("warning item = %+v; the server sent no codeDescription or relatedInformation for it", w)
	}

	// Unchanged text sends nothing and the known set answers at once.
	v2, err := c.Sync(ctx, uri, "plaintext", []byte("ok\n😀 ERROR here\n  WARN\n"))
	if err != nil || v2 != 3 {
		t.Fatalf("Sync of unchanged text = %d, %v; want version 3 kept", v2, err)
	}
	set, err = c.Diagnostics(ctx, uri, WaitOptions{})
	if err != nil || !set.Fresh || len(set.Items) != 2 {
		t.Fatalf("Diagnostics without waiting = %+v, %v", set, err)
	}
}

func TestDiagnosticsStaleWhenTheWaitEnds(t *testing.T) {
	f := startFake(t, "-delay", "300ms")
	c := connect(t, f, Options{})
	ctx := context.Background()
	uri := URIFromPath(filepath.Join(f.root, "a.txt"))
	c.Sync(ctx, uri, "plaintext", []byte("ERROR\n"))
	if set, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second}); err != nil || len(set.Items) != 1 {
		t.Fatalf("Diagnostics = %+v, %v", set, err)
	}
	c.Sync(ctx, uri, "plaintext", []byte("fine\n"))
	set, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: time.Millisecond})
	if err != nil || set.Fresh || len(set.Items) != 1 {
		t.Fatalf("short wait = %+v, %v; want the last known set (1 item), not fresh", set, err)
	}
	set, err = c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second})
	if err != nil || !set.Fresh || len(set.Items) != 0 {
		t.Fatalf("long wait = %+v, %v; want a fresh empty set", set, err)
	}
}

func TestDiagnosticsSuperseded(t *testing.T) {
	f := startFake(t, "-delay", "500ms")
	c := connect(t, f, Options{})
	ctx := context.Background()
	uri := URIFromPath(filepath.Join(f.root, "a.txt"))
	c.Sync(ctx, uri, "plaintext", []byte("ERROR\n"))
	done := make(chan DiagnosticSet)
	go func() {
		set, _ := c.Diagnostics(ctx, uri, WaitOptions{Wait: time.Minute})
		done <- set
	}()
	// Wait until the waiter is parked, then change the document.
	c.Sync(ctx, uri, "plaintext", []byte("fine\n"))
	set := <-done
	if !set.Superseded || set.Version != 1 {
		// The waiter may have started after the second Sync; then it
		// waited for version 2 and got it.
		if set.Version != 2 || !set.Fresh {
			t.Fatalf("the older wait returned %+v; want it superseded", set)
		}
	}
}

func TestDiagnosticsRounds(t *testing.T) {
	f := startFake(t, "-rounds", "2", "-round-delay", "200ms")
	c := connect(t, f, Options{})
	ctx := context.Background()
	uri := URIFromPath(filepath.Join(f.root, "a.txt"))

	c.Sync(ctx, uri, "plaintext", []byte("SYNTAX\nERROR\n"))
	set, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second})
	if err != nil || len(set.Items) != 1 || set.Rounds != 1 {
		t.Fatalf("without settling = %+v, %v; want the first round only (SYNTAX)", set, err)
	}
	c.Sync(ctx, uri, "plaintext", []byte("SYNTAX\nERROR\nERROR\n"))
	set, err = c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second, Settle: 400 * time.Millisecond})
	if err != nil || len(set.Items) != 3 || set.Rounds != 2 {
		t.Fatalf("with settling = %+v, %v; want the second round (3 items)", set, err)
	}
}

func TestPullDiagnostics(t *testing.T) {
	for _, mode := range []string{"-pull", "-register-pull"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"-pull"}
			if mode == "-register-pull" {
				args = append(args, "-register-pull")
			}
			f := startFake(t, args...)
			c := connect(t, f, Options{})
			if mode == "-register-pull" {
				if c.Capabilities().PullDiagnostics {
					t.Fatal("the server offered pull diagnostics statically")
				}
				waitLog(t, f, "answer client/registerCapability")
			}
			ctx := context.Background()
			uri := URIFromPath(filepath.Join(f.root, "a.txt"))
			c.Sync(ctx, uri, "plaintext", []byte("x ERROR\n"))
			set, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second})
			if err != nil || !set.Pulled || !set.Fresh || len(set.Items) != 1 || set.Items[0].Range.Start.Character != 2 {
				t.Fatalf("Diagnostics = %+v, %v; want one pulled item at character 2", set, err)
			}
			waitLog(t, f, "recv textDocument/diagnostic")
		})
	}
}

func TestNegotiatedEncoding(t *testing.T) {
	f := startFake(t, "-encoding", "utf-8")
	c := connect(t, f, Options{})
	if got := c.Capabilities().PositionEncoding; got != UTF8 {
		t.Fatalf("PositionEncoding = %v; want utf-8", got)
	}
	ctx := context.Background()
	uri := URIFromPath(filepath.Join(f.root, "a.txt"))
	text := []byte("é😀 ERROR\n")
	c.Sync(ctx, uri, "plaintext", text)
	set, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second})
	if err != nil || len(set.Items) != 1 {
		t.Fatalf("Diagnostics = %+v, %v", set, err)
	}
	off, err := NewMapper(text).Offset(set.Items[0].Range.Start, UTF8)
	if err != nil || string(text[off:off+5]) != "ERROR" {
		t.Fatalf("utf-8 position %v maps to offset %d, %v", set.Items[0].Range.Start, off, err)
	}
}

func TestServerFaults(t *testing.T) {
	ctx := context.Background()
	t.Run("garbage instead of an answer", func(t *testing.T) {
		f := startFake(t, "-garbage")
		_, err := Connect(ctx, f.rwc, Options{Root: f.root})
		if err == nil || !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "not an LSP message") {
			t.Fatalf("Connect = %v; want ErrClosed saying the server wrote garbage", err)
		}
	})
	t.Run("garbage later", func(t *testing.T) {
		f := startFake(t, "-garbage-on", "textDocument/didOpen")
		c := connect(t, f, Options{})
		uri := URIFromPath(filepath.Join(f.root, "a.txt"))
		c.Sync(ctx, uri, "plaintext", []byte("x"))
		_, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second})
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Diagnostics = %v; want ErrClosed", err)
		}
		<-c.Done()
		if c.Err() == nil {
			t.Fatal("Err() is nil after the server wrote garbage")
		}
	})
	t.Run("crash", func(t *testing.T) {
		f := startFake(t, "-crash-on", "textDocument/didOpen")
		c := connect(t, f, Options{})
		uri := URIFromPath(filepath.Join(f.root, "a.txt"))
		c.Sync(ctx, uri, "plaintext", []byte("x"))
		_, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second})
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Diagnostics = %v; want ErrClosed", err)
		}
	})
	t.Run("no answer", func(t *testing.T) {
		f := startFake(t, "-silent")
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err := Connect(cctx, f.rwc, Options{Root: f.root})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "initialize") {
			t.Fatalf("Connect = %v; want a deadline error naming initialize", err)
		}
	})
	t.Run("flood", func(t *testing.T) {
		f := startFake(t, "-flood", "300", "-flood-items", "50")
		c := connect(t, f, Options{MaxItems: 10, MaxDocuments: 100})
		uri := URIFromPath(filepath.Join(f.root, "a.txt"))
		c.Sync(ctx, uri, "plaintext", []byte("ERROR"))
		set, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second})
		if err != nil || len(set.Items) != 10 {
			t.Fatalf("Diagnostics = %d items, %v; want 10 (MaxItems)", len(set.Items), err)
		}
		// Wait for the flood to have been read, then count what is kept.
		c.Sync(ctx, uri, "plaintext", []byte("ERROR again"))
		c.Diagnostics(ctx, uri, WaitOptions{Wait: 10 * time.Second})
		if n := len(c.Published()); n > 100 {
			t.Fatalf("kept %d documents' sets; want at most MaxDocuments (100)", n)
		}
	})
}
