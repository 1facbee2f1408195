//go:build linux

package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEveryFrontWipesItsEnvironmentBlock: each of darman's fronts, started
// with provider keys and secret-looking variables in its process
// environment, has wiped their values from the block another process
// reads as /proc/PID/environ by the time it answers its client's first
// request, keeping the names and everything else.
func TestEveryFrontWipesItsEnvironmentBlock(t *testing.T) {
	lsp := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	for _, front := range []struct {
		args  []string
		first string
	}{
		{[]string{"lsp", "--stdio"}, lsp(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{}}}`)},
		{[]string{"mcp"}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"},
		{[]string{"acp"}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"},
	} {
		t.Run(front.args[0], func(t *testing.T) {
			e := newEnv(t)
			e.vars = append(e.vars, "ANTHROPIC_API_KEY="+anthropicKey, "OPENAI_API_KEY="+openaiKey,
				"AWS_SECRET_ACCESS_KEY="+awsSecret, "ZZ_SECRET_TOKEN="+namedSecret, "ZZ_PLAIN=plain-stays")
			cmd := exec.Command(darmanBin, front.args...)
			cmd.Dir = e.workspace
			cmd.Env = e.vars
			cmd.SysProcAttr = noTerminal()
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			io.WriteString(stdin, front.first)
			answered := make(chan error, 1)
			go func() {
				_, err := bufio.NewReader(stdout).ReadByte()
				answered <- err
			}()
			select {
			case err := <-answered:
				if err != nil {
					t.Fatalf("darman %s did not answer: %v\nstderr: %s", front.args[0], err, &stderr)
				}
			case <-time.After(time.Minute):
				t.Fatalf("darman %s did not answer in a minute\nstderr: %s", front.args[0], &stderr)
			}
			block, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
			if err != nil {
				t.Fatal(err)
			}
			env := string(bytes.ReplaceAll(block, []byte{0}, []byte{'\n'}))
			for _, secret := range []string{anthropicKey, openaiKey, awsSecret, namedSecret} {
				if strings.Contains(env, secret) {
					t.Errorf("%s is in darman %s's /proc/PID/environ", secret, front.args[0])
				}
			}
			for _, want := range []string{"\nANTHROPIC_API_KEY=\n", "\nZZ_PLAIN=plain-stays\n", "\nHOME=" + e.home + "\n"} {
				if !strings.Contains("\n"+env, want) {
					t.Errorf("%q is not in darman %s's /proc/PID/environ:\n%s", strings.TrimSpace(want), front.args[0], env)
				}
			}
		})
	}
}
