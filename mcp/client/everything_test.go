package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/testenv"
	"github.com/darman-dev/darman/mcp/client"
)

// npmServer finds an MCP reference server that `make deps` installs.
func npmServer(t *testing.T, name string) string {
	t.Helper()
	bin, _ := filepath.Abs(filepath.Join("..", "..", ".cache", "npm", "node_modules", ".bin", name))
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s is not installed: run `make deps` (npm install --prefix .cache/npm @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem)", name)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: run `make deps`")
	}
	return bin
}

// everythingHTTP runs server-everything's streamable HTTP mode on a free
// loopback port and returns its endpoint once it accepts connections.
func everythingHTTP(t *testing.T) string {
	t.Helper()
	return everythingServe(t, "streamableHttp", "/mcp")
}

// everythingServe runs server-everything in one of its HTTP modes and
// returns the URL of path once it accepts connections.
func everythingServe(t *testing.T, mode, path string) string {
	t.Helper()
	bin := npmServer(t, "mcp-server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	p, err := child.Start(cmd, child.Options{Name: "server-everything", MergeStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	go func() { io.Copy(io.Discard, p.Stdout); p.Stdout.Close() }()
	exited := p.Exited()
	t.Cleanup(func() { p.Stop(2 * time.Second) })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatal("server-everything exited before listening")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("server-everything did not listen within 30s")
		}
	}
	return "http://" + addr + path
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, what, 30*time.Second, cond)
}

func TestServerEverything(t *testing.T) {
	for _, transport := range []string{"stdio", "http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			var d client.Definition
			if transport == "stdio" {
				d = client.Definition{Name: "everything", Command: npmServer(t, "mcp-server-everything"), StartupTimeout: 30 * time.Second}
			} else if transport == "http" {
				d = client.Definition{Name: "everything", URL: everythingHTTP(t), StartupTimeout: 30 * time.Second}
			} else {
				d = client.Definition{Name: "everything", URL: everythingServe(t, "sse", "/sse"), SSE: true, StartupTimeout: 30 * time.Second}
			}
			d.SamplingMaxTokens = 40
			plain := d
			plain.Name = "plain"
			plain.SamplingMaxTokens = 0
			sampler := &fakeSampler{}
			var (
				gateMu sync.Mutex
				answer = "accept"
			)
			gate := &gateFunc{f: func(ctx context.Context, e client.Elicitation) (client.ElicitAnswer, error) {
				gateMu.Lock()
				a := answer
				gateMu.Unlock()
				switch a {
				case "none":
					return client.ElicitAnswer{}, client.ErrNoHuman
				case "hang":
					<-ctx.Done()
					return client.ElicitAnswer{}, ctx.Err()
				}
				return client.ElicitAnswer{Action: "accept", Content: map[string]any{"name": "Ada", "check": true, "email": "ada@example.com",
					"homepage": "https://example.com", "birthdate": "1815-12-10", "untitledMultipleSelectEnum": []any{"Piano"},
					"titledMultipleSelectEnum": []any{"fish-1"}, "legacyTitledEnum": "pet-1"}}, nil
			}}
			files := t.TempDir()
			m := client.New([]client.Definition{d, plain}, client.Options{Children: newRegistry(t), Sampler: sampler, Gate: gate, FilesDir: files})
			defer m.Close()
			if err := m.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			first, err := m.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var (
				chargedMu sync.Mutex
				charged   []agent.Usage
			)
			env := func(progress func(string)) *tool.Env {
				e := (&recorder{}).env()
				e.SessionID = "ses_test"
				e.Progress = progress
				e.Charge = func(u agent.Usage, _ float64) {
					chargedMu.Lock()
					defer chargedMu.Unlock()
					charged = append(charged, u)
				}
				return e
			}

			// A long call started on the first catalog finishes on it while
			// the tools/list_changed sent after the handshake builds a new
			// generation that holds the conditional tools.
			var (
				progMu   sync.Mutex
				progress []string
			)
			done := make(chan tool.Result, 1)
			go func() {
				res, err := find(t, first, "everything_trigger-long-running-operation").Run(context.Background(), env(func(s string) {
					progMu.Lock()
					progress = append(progress, s)
					progMu.Unlock()
				}), json.RawMessage(`{"duration": 1, "steps": 3}`))
				if err != nil {
					res = tool.Result{Output: err.Error(), IsError: true}
				}
				done <- res
			}()
			waitFor(t, "a new catalog generation after tools/list_changed", func() bool { return m.Status()[0].Generation >= 2 })
			now, err := m.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			find(t, now, "everything_trigger-elicitation-request")
			res := <-done
			if res.IsError || !strings.Contains(res.Output, "completed") {
				t.Errorf("the long call = %+v; want it completed on its catalog", res)
			}
			progMu.Lock()
			if len(progress) < 1 || !strings.Contains(strings.Join(progress, ";"), "/3") {
				t.Errorf("progress = %q; want step/total updates", progress)
			}
			progMu.Unlock()

			call := func(name, args string) tool.Result {
				t.Helper()
				res, err := find(t, now, name).Run(context.Background(), env(nil), json.RawMessage(args))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			for _, tl := range now {
				n := tl.Info().Name
				if len(n) > client.MaxNameLen || strings.ContainsFunc(n, func(r rune) bool {
					return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
				}) {
					t.Errorf("tool name %q is not sanitized", n)
				}
			}

			if res := call("everything_get-structured-content", `{"location": "New York"}`); res.IsError || !strings.Contains(string(res.Metadata), `"structuredContent"`) || !strings.Contains(string(res.Metadata), "temperature") {
				t.Errorf("structured content: %+v", res)
			}
			img := call("everything_get-tiny-image", `{}`)
			if len(img.Attachments) != 1 || img.Attachments[0].MIME != "image/png" || len(img.Attachments[0].Data) == 0 {
				t.Fatalf("image: %+v", img.Attachments)
			}
			if saved := img.Attachments[0].Name; !strings.HasPrefix(saved, filepath.Join(files, "ses_test")) || !strings.Contains(img.Output, "saved to "+saved) {
				t.Errorf("image saved as %q, output %q; want it under the session's files dir and named in the text", saved, img.Output)
			} else if data, err := os.ReadFile(saved); err != nil || string(data) != string(img.Attachments[0].Data) {
				t.Errorf("saved image: %v", err)
			}
			if links := call("everything_get-resource-links", `{"count": 2}`); strings.Count(links.Output, "resource: ") != 2 {
				t.Errorf("resource links: %q", links.Output)
			}

			// Sampling: only the server with a policy has the tool (it is
			// registered only for clients that advertise sampling).
			if s := call("everything_trigger-sampling-request", `{"prompt": "hi", "maxTokens": 500}`); !strings.Contains(s.Output, "hi there") {
				t.Errorf("sampling: %q", s.Output)
			}
			if len(sampler.reqs) != 1 || sampler.reqs[0].MaxTokens != 40 || sampler.reqs[0].Server != "everything" {
				t.Errorf("sampler saw %+v; want one request capped at 40", sampler.reqs)
			}
			// The server asks over its connection, not within the call
			// (it speaks an older protocol): the one session with a call
			// in flight on it is charged.
			chargedMu.Lock()
			if len(charged) != 1 || charged[0] != (agent.Usage{Input: 12, Output: 3}) {
				t.Errorf("the session was charged %+v; want the sampling's 12 in, 3 out once", charged)
			}
			chargedMu.Unlock()
			for _, tl := range now {
				if tl.Info().Name == "plain_trigger-sampling-request" {
					t.Error("a server without a sampling policy was told darman samples")
				}
			}

			// Elicitation: answered, declined (nobody there), unanswered.
			if e := call("everything_trigger-elicitation-request", `{}`); !strings.Contains(e.Output, "Ada") || !strings.Contains(strings.ToLower(e.Output), "accept") {
				t.Errorf("answered elicitation: %q", e.Output)
			}
			gateMu.Lock()
			answer = "none"
			gateMu.Unlock()
			if e := call("everything_trigger-elicitation-request", `{}`); !strings.Contains(strings.ToLower(e.Output), "decline") {
				t.Errorf("declined elicitation: %q", e.Output)
			}
			gateMu.Lock()
			answer = "hang"
			gateMu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err = find(t, now, "everything_trigger-elicitation-request").Run(ctx, env(nil), json.RawMessage(`{}`))
			cancel()
			if err == nil {
				t.Error("an unanswered elicitation's call returned without its context's error")
			}
			if s := m.Status()[0]; s.State != client.StateReady {
				t.Errorf("after the unanswered call: %+v; want the server still ready", s)
			}
		})
	}
}
