//go:build linux

package main_test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/internal/sandbox"
	"github.com/darman-dev/darman/internal/testenv"
)

// pidNamespace reports whether commands run in a PID namespace of their
// own here: darman is not in their /proc and has no pid there ($PPID is
// 0), which internal/sandbox's TestCommandSeesOnlyTheSandboxsProcesses
// tests. The red-team tests that attack darman by its pid give the
// commands its real one (hostileScript), and expect the attack to fail
// either way.
func pidNamespace(t *testing.T) bool {
	t.Helper()
	sb := sandbox.New(sandbox.Options{Helper: darmanBin})
	defer sb.Close()
	return sb.Status().PIDNamespace
}

// TestSandboxConfinesAllowedCommands: with every bash command allowed by
// rule, the sandbox still keeps a command from writing outside, reading
// a key in home, connecting to a local listener or to a Unix socket
// outside, by effect; the model is told which rule refused.
func TestSandboxConfinesAllowedCommands(t *testing.T) {
	requireSandbox(t)
	e := newEnv(t)
	outside := t.TempDir()
	marker := filepath.Join(outside, "marker")
	e.write(filepath.Join(e.home, ".ssh", "id_rsa"), "-----BEGIN FAKE KEY----- TOPSECRET-KEY")

	addr, tcpConnections := testenv.Greeter(t, "tcp4", "127.0.0.1:0", "LISTENER-SECRET")
	sock := filepath.Join(outside, "agent.sock")
	_, unixConnections := testenv.Greeter(t, "unix", sock, "AGENT-SECRET")
	port := strconv.Itoa(addr.(*net.TCPAddr).Port)
	hostile := []string{
		"echo pwned > " + marker,
		"cat ~/.ssh/id_rsa",
		"exec 3<>/dev/tcp/127.0.0.1/" + port + " && cat <&3",
		`python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(99).decode())' ` + sock,
	}
	var steps []llmtest.Step
	for _, c := range hostile {
		steps = append(steps, llmtest.Step{ToolCalls: []llmtest.ToolCall{call("bash", mustJSON(t, map[string]string{"command": c}))}})
	}
	steps = append(steps,
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"echo inside > inside.txt && cat inside.txt"}`)}},
		llmtest.Step{Text: "done"})
	srv := e.withModel(t, llmtest.Script{Steps: steps})

	out, errs, code := e.run("run", "--allow", "bash:*", "--allow", "edit", "--allow", "external_directory", "try things")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the marker outside the workspace was written")
	}
	if n := tcpConnections.Load() + unixConnections.Load(); n != 0 {
		t.Errorf("%d connections reached the listeners", n)
	}
	everything := out + errs + e.ok("sessions", "show", firstSession(t, e))
	for _, c := range srv.ModelCalls() {
		everything += string(c.Body)
	}
	for _, secret := range []string{"TOPSECRET-KEY", "LISTENER-SECRET", "AGENT-SECRET"} {
		if strings.Contains(everything, secret) {
			t.Errorf("%s reached the output or the model", secret)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.workspace, "inside.txt")); string(b) != "inside\n" {
		t.Errorf("the write inside the workspace: %q", b)
	}
	calls := srv.ModelCalls()
	if len(calls) != len(steps) {
		t.Fatalf("%d model calls, want %d", len(calls), len(steps))
	}
	// The model hears which rule refused, and that running it outside the
	// sandbox was asked and not allowed (nobody to ask in darman run).
	for i, want := range []string{"writableDirs", "readableDirs", "network", "unixSockets"} {
		body := string(calls[i+1].Body)
		if !strings.Contains(body, "refused by darman's sandbox") || !strings.Contains(body, want) || !strings.Contains(body, "sandbox_escape") {
			t.Errorf("the result of %q lacks the note naming %s:\n%s", hostile[i], want, lastToolResult(t, []byte(body)))
		}
	}
}

// TestSandboxKeepsToolchainsWorking: go build, go test, npm test and git
// commit work in a sandboxed workspace with the default caches, through
// darman run; the protected paths stay read-only meanwhile.
func TestSandboxKeepsToolchainsWorking(t *testing.T) {
	requireSandbox(t)
	for _, bin := range []string{"go", "git", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not on PATH", bin)
		}
	}
	e := newEnv(t)
	os.RemoveAll(filepath.Join(e.workspace, ".git"))
	e.write("go.mod", "module example.com/calc\n\ngo 1.22\n")
	e.write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	e.write("calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n")
	e.write("main/main.go", "package main\n\nfunc main() { println(\"built\") }\n")
	e.write("package.json", `{"name":"calc","version":"1.0.0","scripts":{"test":"node -e \"console.log('npm-test-ok')\""}}`)
	e.write(filepath.Join(e.home, ".gitconfig"), "[user]\n\tname = Test\n\temail = test@example.com\n")
	e.vars = append(e.vars, testenv.GoCaches(t)...)
	if out, err := exec.Command("git", "-C", e.workspace, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	hook := filepath.Join(e.workspace, ".git", "hooks", "pre-commit")
	config, _ := os.ReadFile(filepath.Join(e.workspace, ".git", "config"))

	steps := []llmtest.Step{}
	for _, c := range []string{
		"go build -o calc-bin ./main && ./calc-bin",
		"go test ./...",
		"npm test",
		"echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
		"git config core.hooksPath evil",
		"git add -A && git commit -q -m 'first commit' && git log --oneline",
	} {
		steps = append(steps, llmtest.Step{ToolCalls: []llmtest.ToolCall{call("bash", mustJSON(t, map[string]string{"command": c}))}})
	}
	steps = append(steps, llmtest.Step{Text: "done"})
	srv := e.withModel(t, llmtest.Script{Steps: steps})
	out, errs, code := e.run("run", "--allow", "bash:*", "--allow", "edit", "--allow", "external_directory", "build, test, commit")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	calls := srv.ModelCalls()
	if len(calls) != len(steps) {
		t.Fatalf("%d model calls, want %d", len(calls), len(steps))
	}
	for i, want := range map[int]string{1: "built", 2: "ok  \texample.com/calc", 3: "npm-test-ok", 6: "first commit"} {
		if body := lastToolResult(t, calls[i].Body); !strings.Contains(body, want) || strings.Contains(body, "refused by darman's sandbox") {
			t.Errorf("step %d: the result lacks %q:\n%s", i, want, body)
		}
	}
	if _, err := os.Stat(hook); err == nil {
		t.Error("the pre-commit hook was written")
	}
	if b, _ := os.ReadFile(filepath.Join(e.workspace, ".git", "config")); !bytes.Equal(b, config) {
		t.Errorf(".git/config changed:\n%s", b)
	}
	if log, err := exec.Command("git", "-C", e.workspace, "log", "--oneline").CombinedOutput(); err != nil || !strings.Contains(string(log), "first commit") {
		t.Errorf("git log after the sandboxed commit: %v: %s", err, log)
	}
}

// TestDoctorReportsTheSandbox: doctor says what the sandbox does, and that
// commands run unsandboxed when it is off.
func TestDoctorReportsTheSandbox(t *testing.T) {
	requireSandbox(t)
	e := newEnv(t)
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-test-0123456789") // a model to talk to
	out := e.ok("doctor")
	if !strings.Contains(out, "sandbox\n") || !strings.Contains(out, "landlock") || !strings.Contains(out, "network off") {
		t.Errorf("doctor lacks the sandbox:\n%s", out)
	}
	e.write("darman.json", `{"sandbox": {"mode": "off"}}`)
	if out := e.ok("doctor"); !strings.Contains(out, "unsandboxed") {
		t.Errorf("doctor with the sandbox off:\n%s", out)
	}
}

// TestSandboxNetworkCommandsOpenTheNetwork: a command line whose simple
// commands all match sandbox.networkCommands may connect.
func TestSandboxNetworkCommandsOpenTheNetwork(t *testing.T) {
	requireSandbox(t)
	addr, _ := testenv.Greeter(t, "tcp4", "127.0.0.1:0", "HELLO-NET")
	port := strconv.Itoa(addr.(*net.TCPAddr).Port)
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"exec 3<>/dev/tcp/127.0.0.1/`+port+` && head -1 <&3"}`)}},
		{Text: "done"},
	}})
	cfg, _ := os.ReadFile(filepath.Join(e.workspace, "darman.json"))
	e.write("darman.json", strings.Replace(string(cfg), `"model":`, `"sandbox": {"networkCommands": ["exec *", "head *"]}, "model":`, 1))
	out, errs, code := e.run("run", "--allow", "bash:*", "--allow", "edit", "--allow", "external_directory", "connect")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if body := lastToolResult(t, srv.ModelCalls()[1].Body); !strings.Contains(body, "HELLO-NET") {
		t.Errorf("a command matching networkCommands could not connect:\n%s", body)
	}
}

// TestSandboxHelperRunsBeforeDarmanIsInitialized: "darman sandbox-exec"
// is handled by internal/sandbox/early's initializer, right after
// syscall's and before os's and every darman package's (which is what
// keeps the sandbox's start cheap). GODEBUG=inittrace=1 lists each
// initializer as it finishes.
func TestSandboxHelperRunsBeforeDarmanIsInitialized(t *testing.T) {
	cmd := exec.Command(darmanBin, "sandbox-exec")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 125 || !strings.Contains(string(out), "usage: darman sandbox-exec") {
		t.Fatalf("exit %d (%v), want 125 and the usage:\n%s", code, err, out)
	}
	if !strings.Contains(string(out), "init syscall @") {
		t.Skipf("no init trace from this Go:\n%s", out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "init os @") || strings.HasPrefix(line, "init github.com/darman-dev/darman/") {
			t.Errorf("%s ran before the helper:\n%s", strings.Fields(line)[1], out)
		}
	}
}
