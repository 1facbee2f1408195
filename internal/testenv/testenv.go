// Package testenv is the scaffolding darman's tests share: the real
// programs they drive found (gopls) or built (a fake server), a home for
// them that keeps the machine's Go caches and turns gopls's telemetry off,
// small module fixtures, and waiting for a condition. Only _test.go files
// import it.
package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Gopls returns the path of gopls, on PATH or where `go install` puts it
// (GOBIN, else GOPATH/bin); without one the test is skipped.
func Gopls(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	dirs := []string{GoEnv(t, "GOBIN")}
	if gp := GoEnv(t, "GOPATH"); gp != "" {
		dirs = append(dirs, filepath.Join(filepath.SplitList(gp)[0], "bin"))
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "gopls")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	t.Skip("gopls is not installed: run `make deps` (go install golang.org/x/tools/gopls@v0.23.0)")
	return ""
}

var goEnv sync.Map // name → value

// GoEnv is `go env name` of the machine the tests run on, asked once.
func GoEnv(t testing.TB, name string) string {
	t.Helper()
	if v, ok := goEnv.Load(name); ok {
		return v.(string)
	}
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	v := strings.TrimSpace(string(out))
	goEnv.Store(name, v)
	return v
}

// GoCaches are GOCACHE, GOMODCACHE and GOPATH as NAME=value, the
// machine's own, for a process whose HOME is a test's: it then builds
// from the caches already filled instead of filling new ones (whose
// read-only module files t.TempDir could not remove).
func GoCaches(t testing.TB) []string {
	t.Helper()
	var vars []string
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		vars = append(vars, name+"="+GoEnv(t, name))
	}
	return vars
}

// TelemetryOff writes the Go telemetry mode "off" in home's config
// directory. gopls's telemetry otherwise starts a detached process (a
// session of its own, out of reach of the process group darman stops)
// that writes in the home a moment after gopls is gone, racing the
// test's cleanup of it.
func TelemetryOff(t testing.TB, home string) {
	t.Helper()
	WriteFile(t, filepath.Join(home, ".config", "go", "telemetry", "mode"), "off")
}

// GoplsHome makes a fresh home for gopls with telemetry off and returns
// the variables that point it there, as NAME=value: HOME,
// XDG_CONFIG_HOME in it, and the machine's Go and user caches kept
// (GoCaches, XDG_CACHE_HOME), so gopls starts as warm as it would.
func GoplsHome(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	TelemetryOff(t, home)
	vars := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	if cache, err := os.UserCacheDir(); err == nil {
		vars = append(vars, "XDG_CACHE_HOME="+cache)
	}
	return append(vars, GoCaches(t)...)
}

// GoplsEnv is an environment to start gopls in (directly, or through a
// pool of language servers): the test's own with gopls's directory first
// on PATH and GoplsHome's variables. It returns the environment and
// gopls's path; without gopls the test is skipped.
func GoplsEnv(t testing.TB) (env []string, gopls string) {
	t.Helper()
	gopls = Gopls(t)
	path := "PATH=" + filepath.Dir(gopls) + string(os.PathListSeparator) + os.Getenv("PATH")
	return SetEnv(os.Environ(), append([]string{path}, GoplsHome(t)...)...), gopls
}

// SetEnv returns env with each NAME=value of vars in place of env's
// NAME, or added when env has none.
func SetEnv(env []string, vars ...string) []string {
	out := append([]string(nil), env...)
	for _, kv := range vars {
		name, _, _ := strings.Cut(kv, "=")
		i := 0
		for i < len(out) && !strings.HasPrefix(out[i], name+"=") {
			i++
		}
		if i < len(out) {
			out[i] = kv
		} else {
			out = append(out, kv)
		}
	}
	return out
}

// WriteFile writes content at path, making its directories, and returns
// path.
func WriteFile(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// GreetGo is a/a.go of GoModule.
const GreetGo = `package a

// Greet says hello.
func Greet(name string) string {
	return "hello " + name
}
`

// UseGo is b/b.go of GoModule: a caller of a.Greet.
const UseGo = `package b

import "example.com/m/a"

// Use greets x.
func Use() string {
	return a.Greet("x")
}
`

// GoModule writes module example.com/m, package a (GreetGo) and package b
// (UseGo) that calls it, in dir, and returns dir.
func GoModule(t testing.TB, dir string) string {
	t.Helper()
	WriteFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	WriteFile(t, filepath.Join(dir, "a", "a.go"), GreetGo)
	WriteFile(t, filepath.Join(dir, "b", "b.go"), UseGo)
	return dir
}

// Dir is a fresh t.TempDir with its symbolic links resolved, as the paths
// a language server or the kernel report back are.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Eventually polls cond until it holds, failing the test with what after
// within; within only guards against a hang.
func Eventually(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Build builds the main package pkg (an import path) into dir and
// returns the program's path.
func Build(pkg, dir string) (string, error) {
	path := filepath.Join(dir, filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", path, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", pkg, err, out)
	}
	return path, nil
}

// Program is Build into a t.TempDir; a failed build fails the test.
func Program(t testing.TB, pkg string) string {
	t.Helper()
	path, err := Build(pkg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// MainProgram is Build for a TestMain, into a fresh directory that
// cleanup removes; a failed build ends the test binary.
func MainProgram(pkg string) (path string, cleanup func()) {
	dir, err := os.MkdirTemp("", "darman-testenv")
	if err == nil {
		path, err = Build(pkg, dir)
	}
	if err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return path, func() { os.RemoveAll(dir) }
}

// RunWithProgram is the body of a TestMain whose tests start a program
// of the module: it builds pkg (MainProgram) into *path, runs the tests,
// failing them if a goroutine outlives them (goleak), removes the program
// and exits.
func RunWithProgram(m *testing.M, pkg string, path *string) {
	var cleanup func()
	*path, cleanup = MainProgram(pkg)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		cleanup()
		os.Exit(code)
	}))
}

// Buffer collects what a program writes (its stderr, say) while the test
// reads it: a strings.Builder safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Greeter listens on network and address (a TCP port, a Unix socket path,
// an abstract "@name") until the test ends, writes greeting and a newline
// to every connection and closes it: a service a confined command must not
// reach. It returns the address and how many connections were accepted.
func Greeter(t testing.TB, network, address, greeting string) (net.Addr, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Write([]byte(greeting + "\n"))
			c.Close()
		}
	}()
	return ln.Addr(), accepted
}
