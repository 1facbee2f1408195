//go:build linux && amd64

package main_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/internal/testenv"
)

// TestWine runs the real darman.exe, built for windows/amd64, under Wine:
// the Windows smoke suite of `make test` (issue 20), since CI has no
// Windows machine. Wine 8 needs one thing Windows has: a
// bcryptprimitives.dll exporting ProcessPrng, which Go programs load at
// start; scripts/wine/bcryptprimitives.c is that shim, built with MinGW
// into the Wine prefix (test infrastructure only). The prefix and the
// DLL are cached in ~/.cache/darman-test/wine (DARMAN_TEST_CACHE moves
// it), so only the first run pays for making the prefix.
//
// The model is llmtest's scripted server on Linux; darman.exe reaches it
// over TCP loopback. The bash tool runs testdata/winshell (standing in for
// Git for Windows' bash, which cannot be installed here) through
// DARMAN_GIT_BASH_PATH.
func TestWine(t *testing.T) {
	w := setUpWine(t)
	t.Run("version", w.testVersion)
	t.Run("doctor", w.testDoctor)
	t.Run("lsp", w.testLSP)
	t.Run("acp", w.testACP)
	t.Run("store shared by two processes", w.testSharedStore)
	t.Run("process tree killed with darman", w.testTreeKill)
	t.Run("Git bash paths outside the workspace", w.testGitBashPaths)
	t.Run("children have a console of their own", w.testConsole)
}

type wine struct {
	loader  string // wine64
	prefix  string
	exe     string // darman.exe
	shell   string // winshell.exe
	environ []string
}

// setUpWine finds Wine and MinGW (skipping when either is missing), makes
// or reuses the cached prefix with the ProcessPrng shim, and builds
// darman.exe and winshell.exe.
func setUpWine(t *testing.T) *wine {
	if testing.Short() {
		t.Skip("the Wine suite is not short")
	}
	w := &wine{}
	for _, p := range []string{"/usr/lib/wine/wine64", "wine64"} {
		if path, err := exec.LookPath(p); err == nil {
			w.loader = path
			break
		}
	}
	if w.loader == "" {
		t.Skip("wine64 is not installed, so darman.exe is not tested under Wine (apt-get install wine64 gcc-mingw-w64-x86-64-win32; make deps does)")
	}
	gcc, err := exec.LookPath("x86_64-w64-mingw32-gcc")
	if err != nil {
		t.Skip("x86_64-w64-mingw32-gcc is not installed, so the Wine prefix's ProcessPrng shim cannot be built (apt-get install gcc-mingw-w64-x86-64-win32; make deps does)")
	}
	cache := os.Getenv("DARMAN_TEST_CACHE")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(dir, "darman-test")
	}
	cache = filepath.Join(cache, "wine")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	// One setup at a time per cache: another test run may share it.
	lock, err := os.OpenFile(filepath.Join(cache, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	w.prefix = filepath.Join(cache, "prefix")
	w.environ = []string{"WINEPREFIX=" + w.prefix, "WINEDEBUG=-all", "HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH"), "WINEDLLOVERRIDES=mscoree,mshtml="}
	dll := buildShim(t, gcc, cache)
	system32 := filepath.Join(w.prefix, "drive_c", "windows", "system32")
	if _, err := os.Stat(filepath.Join(system32, "kernel32.dll")); err != nil {
		start := time.Now()
		os.RemoveAll(w.prefix)
		boot := exec.Command(w.loader, "wineboot", "-i")
		boot.Env = w.environ
		if out, err := boot.CombinedOutput(); err != nil {
			t.Fatalf("making the Wine prefix %s: %v\n%s", w.prefix, err, out)
		}
		t.Logf("made the Wine prefix %s in %v", w.prefix, time.Since(start).Round(time.Millisecond))
	}
	if err := copyFile(dll, filepath.Join(system32, "bcryptprimitives.dll")); err != nil {
		t.Fatal(err)
	}
	// wineserver outlives each process for a few seconds; stop it and
	// whatever a failed test left in the prefix at the end.
	t.Cleanup(func() {
		kill := exec.Command(filepath.Join(filepath.Dir(w.loader), "wineserver"), "-k")
		if _, err := exec.LookPath(kill.Path); err != nil {
			kill = exec.Command("wineserver", "-k")
		}
		kill.Env = w.environ
		kill.Run()
	})

	bin := t.TempDir()
	w.exe = filepath.Join(bin, "darman.exe")
	w.shell = filepath.Join(bin, "winshell.exe")
	for out, pkg := range map[string]string{w.exe: ".", w.shell: "./testdata/winshell"} {
		build := exec.Command("go", "build", "-o", out, pkg)
		build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		if msg, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s for Windows: %v\n%s", pkg, err, msg)
		}
	}
	return w
}

// buildShim builds the ProcessPrng DLL into the cache, once per version
// of its source.
func buildShim(t *testing.T, gcc, cache string) string {
	src, def := filepath.Join("..", "..", "scripts", "wine", "bcryptprimitives.c"), filepath.Join("..", "..", "scripts", "wine", "bcryptprimitives.def")
	h := sha256.New()
	for _, f := range []string{src, def} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	dll := filepath.Join(cache, "bcryptprimitives-"+hex.EncodeToString(h.Sum(nil))[:12]+".dll")
	if _, err := os.Stat(dll); err == nil {
		return dll
	}
	tmp := dll + ".tmp"
	if out, err := exec.Command(gcc, "-shared", "-O2", "-s", "-o", tmp, src, def, "-ladvapi32").CombinedOutput(); err != nil {
		t.Fatalf("building the ProcessPrng shim: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dll); err != nil {
		t.Fatal(err)
	}
	return dll
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(to); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return os.WriteFile(to, b, 0o644)
}

// winPath is where Wine shows a Linux path: drive Z: is the root.
func winPath(p string) string { return `Z:` + strings.ReplaceAll(p, "/", `\`) }

// winURI is the URI VS Code on Windows gives a path: a lower-case drive
// letter, its colon percent-encoded.
func winURI(p string) string { return "file:///z%3A" + p }

// newEnv gives each test an empty workspace and darman data directories
// (%LOCALAPPDATA%\darman, %APPDATA%\darman): Wine sets those variables
// from the prefix's profile, so the test empties them instead. Edits,
// every bash command and the Linux files (drive Z:, where the tests' temp
// directories are) are allowed; drive C: stays outside.
func (w *wine) newEnv(t *testing.T, script llmtest.Script) (ws string, srv *llmtest.Server, environ []string) {
	users, _ := filepath.Glob(filepath.Join(w.prefix, "drive_c", "users", "*", "AppData"))
	for _, u := range users {
		os.RemoveAll(filepath.Join(u, "Local", "darman"))
		os.RemoveAll(filepath.Join(u, "Roaming", "darman"))
	}
	ws = filepath.Join(t.TempDir(), "project")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	srv = llmtest.Start(t, script)
	cfg := fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "${env:ANTHROPIC_API_KEY}"}},
		"retry": {"maxAttempts": 2, "maxDelay": "10ms"},
		"permission": {"edit": "allow", "bash": {"*": "allow"}, "external_directory": {"Z:/**": "allow"}}
	}`, srv.URL)
	if err := os.WriteFile(filepath.Join(ws, "darman.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// The workspace is the test's own: its user trusts it (a record, as
	// darman trust makes).
	rec, _ := json.Marshal(map[string]any{"folders": []map[string]string{{"path": winPath(ws), "answer": "trusted", "at": "2026-12-01T00:00:00Z"}}})
	for _, u := range users {
		os.MkdirAll(filepath.Join(u, "Roaming", "darman"), 0o755)
		os.WriteFile(filepath.Join(u, "Roaming", "darman", "trust.json"), rec, 0o644)
	}
	environ = append(w.environ, "ANTHROPIC_API_KEY=sk-ant-test-0123456789", "DARMAN_GIT_BASH_PATH="+winPath(w.shell))
	return ws, srv, environ
}

// command is darman.exe args under Wine, in dir.
func (w *wine) command(dir string, environ []string, args ...string) *exec.Cmd {
	cmd := exec.Command(w.loader, append([]string{w.exe}, args...)...)
	cmd.Dir = dir
	cmd.Env = environ
	return cmd
}

func (w *wine) run(t *testing.T, dir string, environ []string, args ...string) (string, int) {
	t.Helper()
	cmd := w.command(dir, environ, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return out.String(), exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), 0
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		t.Fatalf("darman.exe %s did not finish in 60 s:\n%s", strings.Join(args, " "), out.String())
	}
	return "", -1
}

func (w *wine) testVersion(t *testing.T) {
	out, code := w.run(t, t.TempDir(), w.environ, "version")
	if code != 0 || !strings.Contains(out, "windows/amd64") {
		t.Fatalf("darman.exe version: exit %d\n%s", code, out)
	}
}

func (w *wine) testDoctor(t *testing.T) {
	ws, _, environ := w.newEnv(t, llmtest.Script{})
	out, _ := w.run(t, ws, environ, "doctor")
	for _, want := range []string{
		`C:\users\`,                           // the config and data directories are the profile's
		`\AppData\Roaming\darman\config.json`, // %APPDATA%
		`\AppData\Local\darman: 0 sessions`,   // %LOCALAPPDATA%: the store opened
		winPath(ws) + `\darman.json: project`,
		"darman has no sandbox for windows", // said, not silently dropped
		"the bash tool runs " + winPath(w.shell),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "✗") {
		t.Errorf("doctor found a problem:\n%s", out)
	}
}

// lspUnderWine starts darman.exe lsp --stdio and initializes it on the
// workspace as VS Code on Windows does.
func (w *wine) lspUnderWine(t *testing.T, ws string, environ []string) (*exec.Cmd, *lspClient, *testenv.Buffer) {
	t.Helper()
	cmd := w.command(ws, environ, "lsp", "--stdio")
	c, _, stderr := runLSP(t, cmd)
	params := map[string]any{
		"processId":        nil,
		"rootUri":          winURI(ws),
		"capabilities":     map[string]any{"experimental": map[string]any{"darman": map[string]bool{"sessionUpdates": true}}},
		"workspaceFolders": []map[string]string{{"uri": winURI(ws), "name": "project"}},
	}
	if err := c.Call("initialize", params, nil); err != nil {
		t.Fatalf("initialize: %v\nstderr: %s", err, stderr)
	}
	c.Conn.Notify(context.Background(), "initialized", map[string]any{})
	return cmd, c, stderr
}

// prompt runs one turn to its end and returns the session's ID and the
// text the model streamed.
func prompt(t *testing.T, c *lspClient, stderr *testenv.Buffer, text string) (string, string) {
	t.Helper()
	from := len(c.Since(0))
	var tr struct{ SessionID, TurnID string }
	if err := c.Call("workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"prompt": text}}}, &tr); err != nil {
		t.Fatalf("darman.prompt: %v\nstderr: %s", err, stderr)
	}
	c.Await(from, "the end of the turn", isIdle)
	var b strings.Builder
	for _, n := range c.Since(from) {
		var u struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
				Content       struct{ Text string }
			} `json:"update"`
		}
		if n.Method == "darman/sessionUpdate" && json.Unmarshal(n.Params, &u) == nil && u.Update.SessionUpdate == "agent_message_chunk" {
			b.WriteString(u.Update.Content.Text)
		}
	}
	return tr.SessionID, b.String()
}

// A turn through darman.exe lsp: text, an edit of a CRLF file and a bash
// command; then shutdown and exit 0.
func (w *wine) testLSP(t *testing.T) {
	ws, srv, environ := w.newEnv(t, llmtest.Script{Steps: []llmtest.Step{
		{Text: "Answer from the scripted model.", ToolCalls: []llmtest.ToolCall{call("edit", `{"path":"notes.txt","oldString":"two","newString":"three"}`)}},
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"echo from the shell","description":"say hello"}`)}},
		{Text: "Edited."},
	}})
	notes := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(notes, []byte("one\r\ntwo\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, c, stderr := w.lspUnderWine(t, ws, environ)
	if _, text := prompt(t, c, stderr, "edit notes.txt"); !strings.HasPrefix(text, "Answer from the scripted model.") || !strings.HasSuffix(text, "Edited.") {
		t.Errorf("the streamed answer is %q\nstderr: %s", text, stderr)
	}
	if b, _ := os.ReadFile(notes); string(b) != "one\r\nthree\r\n" {
		t.Errorf("notes.txt after the edit = %q, want its CRLF line ends kept", b)
	}
	ran := false
	for _, call := range srv.ModelCalls() {
		ran = ran || strings.Contains(string(call.Body), "winshell: from the shell")
	}
	if !ran {
		t.Errorf("the bash tool's output did not reach the model; stderr:\n%s", stderr)
	}
	if err := c.Call("shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	c.Conn.Notify(context.Background(), "exit", nil)
	if code := exitCode(t, cmd); code != 0 {
		t.Errorf("exit status %d after shutdown and exit; stderr:\n%s", code, stderr)
	}
}

func (w *wine) testACP(t *testing.T) {
	ws, _, environ := w.newEnv(t, llmtest.Script{})
	cmd := w.command(ws, environ, "acp")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &testenv.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", winPath(ws))
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var gotInit, gotSession bool
	timeout := time.After(60 * time.Second)
	for !gotInit || !gotSession {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("darman.exe acp closed stdout; stderr: %s", stderr)
			}
			var m struct {
				ID     int
				Result struct {
					ProtocolVersion int    `json:"protocolVersion"`
					SessionID       string `json:"sessionId"`
				}
				Error *struct{ Message string }
			}
			json.Unmarshal([]byte(l), &m)
			switch {
			case m.Error != nil:
				t.Fatalf("darman.exe acp: %s", l)
			case m.ID == 1:
				gotInit = m.Result.ProtocolVersion == 1
				if !gotInit {
					t.Fatalf("initialize: %s", l)
				}
			case m.ID == 2:
				gotSession = m.Result.SessionID != ""
				if !gotSession {
					t.Fatalf("session/new: %s", l)
				}
			}
		case <-timeout:
			t.Fatalf("darman.exe acp did not answer; stderr: %s", stderr)
		}
	}
	stdin.Close()
}

// darman lsp owns the store; darman sessions list, a second process, is
// its client over TCP loopback (with the owner's token), then its owner
// once lsp has exited.
func (w *wine) testSharedStore(t *testing.T) {
	ws, _, environ := w.newEnv(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Stored."}}})
	cmd, c, stderr := w.lspUnderWine(t, ws, environ)
	id, _ := prompt(t, c, stderr, "remember this")
	out, code := w.run(t, ws, append(environ, "DARMAN_LOG_LEVEL=debug"), "sessions", "list", "--json")
	if code != 0 || !strings.Contains(out, id) {
		t.Fatalf("darman sessions list beside darman lsp: exit %d, no session %s:\n%s\nlsp's stderr:\n%s", code, id, out, stderr)
	}
	c.Call("shutdown", nil, nil)
	c.Conn.Notify(context.Background(), "exit", nil)
	exitCode(t, cmd)
	if out, code := w.run(t, ws, environ, "sessions", "list", "--json"); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("darman sessions list after darman lsp exited: exit %d, no session %s:\n%s", code, id, out)
	}
}

// A command leaves a grandchild running; darman.exe is killed (no
// cleanup of its own); the job object's kill-on-close ends the grandchild.
func (w *wine) testTreeKill(t *testing.T) {
	beat := filepath.Join(t.TempDir(), "beat")
	ws, srv, environ := w.newEnv(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("bash", fmt.Sprintf(`{"command":%q}`, "tree "+strings.ReplaceAll(winPath(beat), `\`, "/")))}},
		{Text: "Started."},
	}})
	cmd, c, stderr := w.lspUnderWine(t, ws, environ)
	prompt(t, c, stderr, "start it")
	beating := func(d time.Duration) bool {
		a, _ := os.ReadFile(beat)
		time.Sleep(d)
		b, _ := os.ReadFile(beat)
		return len(b) > 0 && !bytes.Equal(a, b)
	}
	// Under load Wine may take seconds to start the grandchild.
	deadline := time.Now().Add(20 * time.Second)
	for !beating(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild did not run within 20 s; the bash tool said:\n%s\nstderr:\n%s", toolSaid(t, srv), stderr)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for beating(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the grandchild still runs 10 s after darman.exe was killed")
		}
	}
}

// Git bash spells drive C: /c: the model reads C:\windows\win.ini and
// writes a marker in C:\users\Public that way. Edit and every bash
// command are allowed (newEnv's config), but both files are outside the
// workspace: darman run, with no one to ask, refuses both, and no marker
// is written.
func (w *wine) testGitBashPaths(t *testing.T) {
	marker := fmt.Sprintf("darman-marker-%d", os.Getpid())
	onDisk := filepath.Join(w.prefix, "drive_c", "users", "Public", marker)
	t.Cleanup(func() { os.Remove(onDisk) })
	ws, srv, environ := w.newEnv(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			call("bash", `{"command":"cat /c/windows/win.ini"}`),
			call("bash", `{"command":"echo x > /c/users/Public/`+marker+`"}`),
		}},
		{Text: "Done."},
	}})
	out, code := w.run(t, ws, environ, "run", "read win.ini, leave a marker")
	if _, err := os.Stat(onDisk); err == nil {
		t.Errorf("the marker %s was written outside the workspace", onDisk)
	}
	calls := srv.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want 2; exit %d:\n%s", len(calls), code, out)
	}
	body := string(calls[1].Body)
	if strings.Contains(body, "[mail]") || strings.Contains(body, "winshell") {
		t.Errorf("cat /c/windows/win.ini ran; darman run: exit %d:\n%s", code, out)
	}
	for _, want := range []string{`external_directory \"C:/windows/win.ini\"`, `external_directory \"C:/users/Public/` + marker} {
		if !strings.Contains(body, want) {
			t.Errorf("the model was not told of the refusal %s; darman run: exit %d:\n%s", want, code, out)
		}
	}
}

// toolSaid is what the tools' results said in the model's last call.
func toolSaid(t *testing.T, srv *llmtest.Server) string {
	calls := srv.ModelCalls()
	if len(calls) == 0 {
		return "(the model was never called)"
	}
	return lastToolResult(t, calls[len(calls)-1].Body)
}

// The bash tool's command gets a hidden console of its own: sharing
// darman's, it could read the console's input, type into it (answer
// `darman run`'s permission prompt) and would get the user's Ctrl-C.
// darman run's stdin is a terminal, as in a user's shell, so that Wine
// gives darman a console on it (without one, it gives none, and a child
// could not share it).
func (w *wine) testConsole(t *testing.T) {
	ws, srv, environ := w.newEnv(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"console"}`)}},
		{Text: "Done."},
	}})
	slave, _ := testenv.PTY(t)
	cmd := w.command(ws, environ, "run", "which console")
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("darman.exe run: %v\n%s", err, out.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("darman.exe run did not finish in 60 s:\n%s", out.String())
	}
	if got := toolSaid(t, srv); !strings.Contains(got, "winshell: console: its own") {
		t.Errorf("the command did not get a console of its own; the bash tool said:\n%s\ndarman run said:\n%s", got, out.String())
	}
}
