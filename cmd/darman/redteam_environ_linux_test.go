//go:build linux

package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// Fake secrets in darman's own process environment (exec.Cmd.Env, so
// they are in the initial environment block that /proc/PID/environ
// shows). None is spelt by a hostile command.
const (
	anthropicKey = "sk-ant-ENVBLOCK-anthropic-31415"
	openaiKey    = "sk-ENVBLOCK-openai-92653"
	awsSecret    = "ENVBLOCK-aws-secret-58979"
	awsSession   = "ENVBLOCK-aws-session-32384"
	namedSecret  = "ENVBLOCK-named-secret-62643"
	// headerValue is a secret by value only: its variable's name looks
	// like nothing, but the configuration sends it as a header.
	headerValue = "ENVBLOCK-header-value-38327"
)

// TestRedTeamCannotReadDarmansEnvironment: darman is started with
// provider keys and secret-looking variables in its real process
// environment. Allowed commands read /proc/PPID/environ, the environ of
// each of its threads, and that of every process they can find by
// walking /proc: no secret is in anything they print, whether the
// command is confined on darman's thread (no protected path) or, with a
// git repository, in the mount namespace of the thread (root) or through
// the helper (another user). darman itself still sends the key and the
// header to the provider.
func TestRedTeamCannotReadDarmansEnvironment(t *testing.T) {
	requireSandbox(t)
	inNS := pidNamespace(t)
	for _, git := range []bool{false, true} {
		t.Run(map[bool]string{false: "no protected path", true: "git workspace"}[git], func(t *testing.T) {
			srv, seen := runEnvironHostile(t, git)
			for _, tried := range []string{"TRIED-PARENT", "TRIED-THREADS", "TRIED-WALK", "TRIED-PYTHON"} {
				if !strings.Contains(seen, tried) {
					t.Errorf("a hostile command did not run to its end (%s missing)", tried)
				}
			}
			// As root the commands do read the block (another user's are
			// refused it): the names stay, their values are gone. In a
			// PID namespace of their own they cannot find it at all.
			if os.Geteuid() == 0 && !inNS && !strings.Contains(seen, "ANTHROPIC_API_KEY=") {
				t.Errorf("no command read darman's environment block at all:\n%s", seen)
			}
			for _, secret := range []string{anthropicKey, openaiKey, awsSecret, awsSession, namedSecret, headerValue} {
				if strings.Contains(seen, secret) {
					t.Errorf("%s reached the model", secret)
				}
			}
			calls := srv.ModelCalls()
			if len(calls) == 0 {
				t.Fatal("darman made no model call")
			}
			for _, c := range calls {
				if auth := c.Header.Get("X-Api-Key") + c.Header.Get("Authorization"); !strings.Contains(auth, anthropicKey) {
					t.Errorf("the provider got no key from darman (x-api-key and authorization %q)", auth)
				}
				if got := c.Header.Get("X-Zz-Extra"); got != headerValue {
					t.Errorf("the provider got X-Zz-Extra %q, want the configured header", got)
				}
			}
		})
	}
}

// runEnvironHostile runs one `darman run` turn whose allowed bash calls
// read darman's environment every way a command can find it, with
// darman's process environment holding the secrets above, and returns
// the model server and everything the model and the terminal saw.
func runEnvironHostile(t *testing.T, git bool) (*llmtest.Server, string) {
	t.Helper()
	e := newEnv(t)
	if !git {
		os.RemoveAll(filepath.Join(e.workspace, ".git"))
	}
	hostile := []string{
		`tr '\0' '\n' < /proc/$PPID/environ; echo TRIED-PARENT`,
		`for t in /proc/$PPID/task/*; do tr '\0' '\n' < $t/environ; done; echo TRIED-THREADS`,
		// darman found by name, and every process there is.
		`for p in /proc/[0-9]*; do if grep -qs darman $p/cmdline; then echo "darman is ${p#/proc/}"; fi; tr '\0' '\n' < $p/environ; for t in $p/task/*; do tr '\0' '\n' < $t/environ; done; done 2>/dev/null; echo TRIED-WALK`,
		`python3 -c '
import os
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            print(open("/proc/%s/environ" % p, "rb").read().replace(b"\0", b"\n").decode(errors="replace"))
        except OSError as e:
            print(p, e)
' 2>&1 | head -c 200000; echo TRIED-PYTHON`,
	}
	srv := llmtest.Start(t, hostileScript(t, e, hostile, "done"))
	// In the user's config: a workspace's darman.json is a protected path.
	e.write(filepath.Join(e.home, ".config", "darman", "config.json"), fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "${env:ANTHROPIC_API_KEY}", "headers": {"X-Zz-Extra": "${env:ZZ_EXTRA}"}}},
		"retry": {"maxAttempts": 2, "maxDelay": "10ms"}
	}`, srv.URL))
	e.vars = append(e.vars, "ANTHROPIC_API_KEY="+anthropicKey, "OPENAI_API_KEY="+openaiKey,
		"AWS_SECRET_ACCESS_KEY="+awsSecret, "AWS_SESSION_TOKEN="+awsSession, "ZZ_SECRET_TOKEN="+namedSecret,
		"ZZ_EXTRA="+headerValue)
	out, errs, code := e.run("run", "--allow", "bash:*", "--allow", "external_directory", "look around")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	seen := out + errs
	for _, c := range srv.ModelCalls() {
		seen += string(c.Body)
	}
	return srv, seen
}
