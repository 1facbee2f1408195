package editors

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// The current editors (Helix 25.07, Neovim 0.12, Emacs 30) run from a
// Debian sid root that scripts/install-sid-root.sh prepares once per
// machine (`make deps`), outside the repository. Each test gets a directory
// of its own inside the root (its darman, home and workspace), and runs the
// editor there with chroot, in a mount namespace of its own: proc, /dev,
// /dev/pts and Go (for gopls) are mounted in it only, so they vanish with
// the editor's processes even when the test fails or is killed.

// sidTests are the tests that need the root, named when it is missing.
const sidTests = "TestHelix, TestNeovim012, TestNeovim012InlineCompletion, TestEmacs30, TestEmacs30CompletionItem"

// sidRootDir is where install-sid-root.sh puts the root.
func sidRootDir() string {
	cache := os.Getenv("DARMAN_TEST_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "darman-test")
	}
	return filepath.Join(cache, "sid")
}

// sidMissing says why the root cannot be used, or "".
func sidMissing() string {
	root := sidRootDir()
	if _, err := os.Stat(filepath.Join(root, ".complete")); err != nil {
		return fmt.Sprintf("no Debian sid root in %s (make deps prepares it: scripts/install-sid-root.sh, as root with Debian's packages reachable)", root)
	}
	if os.Geteuid() != 0 {
		return "running the editors of the Debian sid root needs root (chroot, mounts)"
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return "unshare (util-linux) is missing"
	}
	return ""
}

func TestMain(m *testing.M) {
	// Said whether or not -v is given: a skip is never silent.
	if why := sidMissing(); why != "" {
		fmt.Fprintf(os.Stderr, "editors: %s; skipping %s\n", why, sidTests)
	}
	os.Exit(m.Run())
}

var (
	staticOnce sync.Once
	staticDir  string
	staticErr  error
)

// staticDarman builds darman without cgo once, so it runs in the root
// whatever its C library.
func staticDarman(t *testing.T) string {
	t.Helper()
	staticOnce.Do(func() {
		staticDir, staticErr = os.MkdirTemp("", "darman-static-")
		if staticErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(staticDir, "darman"), "github.com/darman-dev/darman/cmd/darman")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			staticErr = fmt.Errorf("CGO_ENABLED=0 go build ./cmd/darman: %v\n%s", err, out)
		}
	})
	if staticErr != nil {
		t.Fatal(staticErr)
	}
	return filepath.Join(staticDir, "darman")
}

// sid is one test's place in the root: dir is its directory as the
// editor sees it (under /tmp of the root), with bin/ (darman, gopls),
// home/ and ws/ (the workspace).
type sid struct {
	t          *testing.T
	root, dir  string
	model      *llmtest.Server
	goroot     string // the host's Go, mounted at /usr/local/go for gopls
	mountsHint string
}

// newSid skips the test, saying why, when the root cannot be used.
func newSid(t *testing.T) *sid {
	t.Helper()
	if why := sidMissing(); why != "" {
		t.Skipf("%s: skipping %s", why, t.Name())
	}
	root := sidRootDir()
	host, err := os.MkdirTemp(filepath.Join(root, "tmp"), "darman-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(host) })
	s := &sid{t: t, root: root, dir: strings.TrimPrefix(host, root)}
	for _, d := range []string{"bin", "home", "ws"} {
		if err := os.MkdirAll(s.host(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, staticDarman(t), s.host("bin/darman"))
	if gopls, err := exec.LookPath("gopls"); err == nil {
		copyFile(t, gopls, s.host("bin/gopls"))
	} else if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		if p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "gopls"); fileExists(p) {
			copyFile(t, p, s.host("bin/gopls"))
		}
	}
	if goroot, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		s.goroot = strings.TrimSpace(string(goroot))
	}
	return s
}

// host is a path inside the test's directory as the host sees it.
func (s *sid) host(rel string) string { return filepath.Join(s.root, s.dir, rel) }

// in is a path inside the test's directory as the editor sees it.
func (s *sid) in(rel string) string { return filepath.Join(s.dir, rel) }

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// write puts a file in the test's directory.
func (s *sid) write(rel, content string) {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Dir(s.host(rel)), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(s.host(rel), []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *sid) read(rel string) string {
	s.t.Helper()
	b, err := os.ReadFile(s.host(rel))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// workspace writes a Go module in ws/ with a darman.json that points
// darman at the scripted model (extra: more keys of darman.json).
func (s *sid) workspace(script llmtest.Script, files map[string]string, extra string) {
	s.t.Helper()
	s.model = llmtest.Start(s.t, script)
	s.write("ws/go.mod", "module example.com/hello\n\ngo 1.22\n")
	for rel, content := range files {
		s.write("ws/"+rel, content)
	}
	s.write("ws/darman.json", fmt.Sprintf(`{"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "sk-ant-test-0123456789"}},
		"retry": {"maxAttempts": 1}%s}`, s.model.URL, extra))
	// The workspace is the test's own: its user trusts it.
	s.write("home/.config/darman/trust.json", trustRecord(s.in("ws")))
	s.t.Cleanup(func() {
		if s.t.Failed() {
			b, _ := os.ReadFile(s.host("home/darman.log"))
			var keep []string
			for _, l := range strings.Split(string(b), "\n") {
				if !strings.Contains(l, "component=badger") {
					keep = append(keep, l)
				}
			}
			s.t.Logf("darman's log:\n%s", tail(strings.Join(keep, "\n"), 12000))
			if calls := s.model.ModelCalls(); len(calls) > 0 {
				msgs := calls[len(calls)-1].Get("messages").Array()
				var last []string
				for _, m := range msgs[max(len(msgs)-3, 0):] {
					last = append(last, m.Raw)
				}
				s.t.Logf("the model's last messages (of %d calls):\n%s", len(calls), tail(strings.Join(last, "\n"), 3000))
			}
		}
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// env is the editor's environment inside the root.
func (s *sid) env() []string {
	return []string{
		"HOME=" + s.in("home"),
		"PATH=" + s.in("bin") + ":/usr/local/go/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		"TERM=xterm-256color",
		"XDG_CONFIG_HOME=" + s.in("home/.config"),
		"XDG_DATA_HOME=" + s.in("home/.local/share"),
		"XDG_STATE_HOME=" + s.in("home/.local/state"),
		"XDG_CACHE_HOME=" + s.in("home/.cache"),
		"GOCACHE=" + s.in("home/.cache/go-build"),
		"GOPATH=" + s.in("home/go"),
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		"GOFLAGS=-mod=mod",
		"DARMAN_LOG_LEVEL=debug",
		"DARMAN_LOG_FILE=" + s.in("home/darman.log"),
	}
}

// command is argv run in the root, in a mount namespace of its own with
// proc, /dev, /dev/pts and the host's Go mounted, from dir (inside the
// root), with env added to the editor's environment.
func (s *sid) command(dir string, env []string, argv ...string) *exec.Cmd {
	mountGo := ""
	if s.goroot != "" {
		os.MkdirAll(filepath.Join(s.root, "usr/local/go"), 0o755)
		mountGo = `mount --bind -o ro "$GOROOT_HOST" "$R/usr/local/go" && `
	}
	script := `set -e; mount -t proc proc "$R/proc" && mount --bind /dev "$R/dev" && mount --bind /dev/pts "$R/dev/pts" && ` + mountGo +
		`cd "$R$DIR" && exec chroot "$R" sh -c 'cd "$0" && exec env -i "$@"' "$DIR" "$@"`
	args := append(append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh"}, s.env()...), env...)
	cmd := exec.Command("unshare", append(args, argv...)...)
	cmd.Env = append(os.Environ(), "R="+s.root, "DIR="+dir, "GOROOT_HOST="+s.goroot)
	return cmd
}

// screen is a terminal in tmux (inside the root) running one program; the
// test types with send-keys and reads with capture-pane, as a person
// would use it.
type screen struct {
	s    *sid
	sock string
}

// tmux starts program (a shell command line) in a 120×30 tmux session in
// dir. The session ends with the program; the test's end kills it too.
func (s *sid) tmux(dir, program string) *screen {
	s.t.Helper()
	sc := &screen{s: s, sock: s.in("tmux.sock")}
	// timeout: should the test process die, the editor does not stay.
	cmd := s.command(dir, nil, "tmux", "-S", sc.sock, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30", "timeout 600 "+program)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	s.t.Cleanup(func() { sc.tmuxCmd("kill-server") })
	return sc
}

// tmuxCmd runs a tmux client command; clients need no mounts.
func (sc *screen) tmuxCmd(args ...string) (string, error) {
	out, err := exec.Command("chroot", append([]string{sc.s.root, "tmux", "-S", sc.sock}, args...)...).CombinedOutput()
	return string(out), err
}

// keys types keys (tmux key names or text), one send-keys each, with a
// pause after each so that Helix reads Escape as a key of its own rather
// than as Alt with the next one.
func (sc *screen) keys(keys ...string) {
	sc.s.t.Helper()
	for _, k := range keys {
		if out, err := sc.tmuxCmd("send-keys", k); err != nil {
			sc.s.t.Fatalf("send-keys %q: %v\n%s", k, err, out)
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// literal types text as it is (send-keys -l).
func (sc *screen) literal(text string) {
	sc.s.t.Helper()
	if out, err := sc.tmuxCmd("send-keys", "-l", text); err != nil {
		sc.s.t.Fatalf("send-keys -l %q: %v\n%s", text, err, out)
	}
	time.Sleep(150 * time.Millisecond)
}

func (sc *screen) text() string {
	out, _ := sc.tmuxCmd("capture-pane", "-p")
	return out
}

// waitFor waits until the screen shows what cond looks for, and returns
// the screen; after 30 s the test fails with the screen.
func (sc *screen) waitFor(what string, cond func(string) bool) string {
	sc.s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		text := sc.text()
		if cond(text) {
			return text
		}
		if time.Now().After(deadline) {
			sc.s.t.Fatalf("the screen never showed %s:\n%s", what, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (sc *screen) waitText(s string) string {
	sc.s.t.Helper()
	return sc.waitFor(fmt.Sprintf("%q", s), func(text string) bool { return strings.Contains(text, s) })
}

// gone reports whether no process runs the test's darman any more.
func (s *sid) darmanRunning() bool {
	bin := s.host("bin/darman")
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if exe, err := os.Readlink(filepath.Join("/proc", p.Name(), "exe")); err == nil && exe == bin {
			return true
		}
	}
	return false
}

// docSnippet is the code block of lang in the README (or the editors'
// page of docs/, where the README points) that follows the line holding
// after: the test uses the snippet exactly as printed.
func docSnippet(t *testing.T, lang, after string) string {
	t.Helper()
	for _, doc := range []string{"../docs/editors.md", "../README.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			continue
		}
		text := string(b)
		i := strings.Index(text, after)
		if i < 0 {
			continue
		}
		re := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```")
		if m := re.FindStringSubmatch(text[i:]); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no ```%s block after %q in the README or docs/editors.md", lang, after)
	return ""
}

// run runs an editor in the root to its end (two minutes at most) and
// returns the key=value lines its script wrote to $OUT.
func (s *sid) run(env []string, argv ...string) map[string][]string {
	s.t.Helper()
	cmd := s.command(s.in("ws"), append(env, "OUT="+s.in("out")), argv...)
	done := make(chan struct{})
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	close(done)
	if err != nil {
		s.t.Fatalf("%s: %v\n%s", argv[0], err, out)
	}
	b, err := os.ReadFile(s.host("out"))
	if err != nil {
		s.t.Fatalf("%s wrote no results: %v\n%s", argv[0], err, out)
	}
	r := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		r[k] = append(r[k], v)
	}
	s.t.Logf("%s saw: %v", argv[0], r)
	if len(r["error"]) > 0 {
		s.t.Fatalf("the script failed: %v\n%s", r["error"], out)
	}
	return r
}

func toolStep(name string, args any) llmtest.Step {
	b, _ := json.Marshal(args)
	return llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: b}}}
}
