package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// TestMain runs the test binary as scripted-model when asked to, so that
// the tests drive the real program in its own process.
func TestMain(m *testing.M) {
	if os.Getenv("SCRIPTED_MODEL_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func start(t *testing.T, args ...string) (url string, cmd *exec.Cmd, stdin func()) {
	t.Helper()
	cmd = exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SCRIPTED_MODEL_RUN_MAIN=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL on stdout: %v; stderr: %s", err, stderr.String())
	}
	return strings.TrimSpace(line), cmd, func() { in.Close() }
}

func TestServesAScriptFromAnotherProcess(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"steps":[{"text":"Hello from another process."}]}`), 0o644)
	url, cmd, closeStdin := start(t, "-stdin-eof-exit", script)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q is not the URL", url)
	}

	c, err := provider.New(provider.Settings{Name: "anthropic", BaseURL: url, APIKey: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := llm.Collect(c.Stream(ctx, &llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{llm.UserText("hi")}}))
	if err != nil || r.Text() != "Hello from another process." {
		t.Fatalf("%v %+v", err, r)
	}

	res, err := http.Get(url + "/llmtest/calls")
	if err != nil {
		t.Fatal(err)
	}
	var calls []struct {
		API   string `json:"api"`
		Model string `json:"model"`
	}
	json.NewDecoder(res.Body).Decode(&calls)
	res.Body.Close()
	if len(calls) != 1 || calls[0].API != "anthropic" || calls[0].Model != "claude-sonnet-4-5" {
		t.Errorf("calls %+v", calls)
	}

	// Closing its standard input stops it.
	closeStdin()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running after its stdin closed")
	}
}

func TestBadScript(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"steps":[{"txt":"typo"}]}`), 0o644)
	var out, errs strings.Builder
	if code := run([]string{script}, strings.NewReader(""), &out, &errs); code != 1 {
		t.Errorf("exit code %d", code)
	}
	if !strings.Contains(errs.String(), `unknown field "txt"`) || out.Len() != 0 {
		t.Errorf("stderr %q, stdout %q", errs.String(), out.String())
	}
	if code := run(nil, strings.NewReader(""), &out, &errs); code != 2 || !strings.Contains(errs.String(), "usage: scripted-model") {
		t.Errorf("no script: exit %d, stderr %q", code, errs.String())
	}
}
