//go:build linux

package main_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestRedTeamThroughDarmansThread: darman starts a command from a thread
// of its own confined by the command's policy, which shares the command's
// Landlock domain while the command runs. Through that thread's entries in
// /proc (/proc/PID/task/TID), an allowed command must reach no more of
// darman than through /proc/PID: not its memory, not its open files, and
// not the provider key in its environment.
func TestRedTeamThroughDarmansThread(t *testing.T) {
	requireSandbox(t)
	e := newEnv(t)
	hostile := []string{
		`for t in /proc/$PPID/task/*; do tr '\0' '\n' < $t/environ; done; tr '\0' '\n' < /proc/$PPID/environ; echo TRIED-ENVIRON`,
		`for t in /proc/$PPID/task/*; do (exec 4< $t/mem && echo MEM""-OPENED $t); done; echo TRIED-MEM`,
		`python3 -c '
import os, sys
ppid = int(sys.argv[1])
for t in os.listdir("/proc/%d/task" % ppid):
    d = "/proc/%d/task/%s/fd" % (ppid, t)
    try:
        fds = os.listdir(d)
    except OSError:
        continue
    for fd in fds:
        try:
            os.close(os.open(d + "/" + fd, os.O_RDONLY))
            print("FD" "-TAKEN", t, fd, os.readlink(d + "/" + fd))
        except OSError:
            pass
' $PPID; echo TRIED-FD`,
	}
	e.vars = append(e.vars, "SECRET_TOKEN="+envSecret)
	srv, out, errs, code := runHostile(t, e, hostile, "done")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	everything := out + errs
	for _, c := range srv.ModelCalls() {
		everything += string(c.Body)
	}
	for _, tried := range []string{"TRIED-ENVIRON", "TRIED-MEM", "TRIED-FD"} {
		if !strings.Contains(everything, tried) {
			t.Errorf("a hostile command did not run to its end (%s missing)", tried)
		}
	}
	// The markers are spelt apart in the commands, which the model's
	// requests repeat.
	// A command of root's reads /proc/PID/environ of darman's whatever
	// Landlock says, but darman has wiped the values there.
	for _, leak := range []string{"MEM-OPENED", "FD-TAKEN", "sk-ant-test-0123456789", envSecret} {
		if strings.Contains(everything, leak) {
			t.Errorf("%s reached the output or the model", leak)
		}
	}
}

// hostileScript is a script that calls bash once for each of hostile,
// then says final. $PPID in a command is darman's pid as the machine sees
// it ($DARMAN_TIDS its threads', comma-separated): where commands run in a PID namespace of their own, darman is not
// their parent ($PPID is 0 there) and not in their /proc, and an attacker
// would have to guess or learn its pid; the test gives it, so that the
// attack on darman is tried either way.
func hostileScript(t *testing.T, e *env, hostile []string, final string) llmtest.Script {
	t.Helper()
	return llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		if c.Step >= len(hostile) {
			return llmtest.Step{Text: final}
		}
		pid := darmanPID(e.home)
		if pid == "0" {
			t.Errorf("the test found no darman run of its own to attack")
		}
		var tids []string
		tasks, _ := os.ReadDir(filepath.Join("/proc", pid, "task"))
		for _, task := range tasks {
			tids = append(tids, task.Name())
		}
		command := strings.NewReplacer("$PPID", pid, "$DARMAN_TIDS", strings.Join(tids, ",")).Replace(hostile[c.Step])
		return llmtest.Step{ToolCalls: []llmtest.ToolCall{call("bash", mustJSON(t, map[string]string{"command": command}))}}
	}}
}

// darmanPID is the pid of the `darman run` whose HOME is home, found
// from outside ("0" when there is none).
func darmanPID(home string) string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) < 2 || args[0] != darmanBin || args[1] != "run" {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join(d, "environ"))
		if slices.Contains(strings.Split(string(environ), "\x00"), "HOME="+home) {
			return filepath.Base(d)
		}
	}
	return "0"
}

// runHostile runs one `darman run` turn in the workspace, without its
// .git (no protected path, so darman confines a thread of its own rather
// than running the helper), in which the scripted model calls bash once
// for each of hostile, every call allowed, and then says final.
func runHostile(t *testing.T, e *env, hostile []string, final string) (srv *llmtest.Server, stdout, stderr string, code int) {
	t.Helper()
	os.RemoveAll(filepath.Join(e.workspace, ".git"))
	srv = e.withModel(t, hostileScript(t, e, hostile, final))
	// darman.json is a protected path too: the config goes to the user's.
	cfg := filepath.Join(e.workspace, "darman.json")
	b, _ := os.ReadFile(cfg)
	os.Remove(cfg)
	e.write(filepath.Join(e.home, ".config", "darman", "config.json"), string(b))
	stdout, stderr, code = e.run("run", "--allow", "bash:*", "--allow", "external_directory", "look around")
	return srv, stdout, stderr, code
}
