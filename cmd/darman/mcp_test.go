package main_test

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

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goplsDir is the directory gopls is in, or the test is skipped.
func goplsDir(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("gopls"); err == nil {
		return filepath.Dir(p)
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		dir := filepath.Join(strings.TrimSpace(string(out)), "bin")
		if _, err := os.Stat(filepath.Join(dir, "gopls")); err == nil {
			return dir
		}
	}
	t.Skip("gopls is not installed: run `make deps` (go install golang.org/x/tools/gopls@v0.23.0)")
	return ""
}

// mcpEnv is a user's machine with a small Go module as the workspace and
// gopls on PATH.
func mcpEnv(t *testing.T) *env {
	e := newEnv(t)
	dir := goplsDir(t)
	for i, v := range e.vars {
		if strings.HasPrefix(v, "PATH=") {
			e.vars[i] = "PATH=" + dir + string(os.PathListSeparator) + strings.TrimPrefix(v, "PATH=")
		}
	}
	e.vars = append(e.vars, "GOCACHE="+filepath.Join(e.home, ".cache", "go-build"))
	if gp, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE").Output(); err == nil {
		l := strings.Split(strings.TrimSpace(string(gp)), "\n")
		e.vars = append(e.vars, "GOPATH="+l[0], "GOMODCACHE="+l[1])
	}
	e.write("go.mod", "module example.com/m\n\ngo 1.22\n")
	e.write("a/a.go", "package a\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"hello \" + name\n}\n")
	e.write("b/b.go", "package b\n\nimport \"example.com/m/a\"\n\n// Use greets x.\nfunc Use() string {\n\treturn a.Greet(\"x\")\n}\n")
	return e
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// TestMCPOverStdio runs the real binary as an MCP client starts it, from
// a subdirectory of the project, and drives it with the go-sdk client.
func TestMCPOverStdio(t *testing.T) {
	e := mcpEnv(t)
	cmd := exec.Command(darmanBin, "mcp")
	cmd.Dir = filepath.Join(e.workspace, "b")
	cmd.Env = e.vars
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cs.Close(); err != nil {
			t.Logf("close: %v (stderr: %s)", err, stderr.String())
		}
	}()
	if cs.InitializeResult() != nil && !strings.Contains(cs.InitializeResult().Instructions, "names, not cursor positions") {
		t.Errorf("instructions = %q", cs.InitializeResult().Instructions)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 11 {
		t.Fatalf("tools/list = %v, %v", tools, err)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_symbol", Arguments: map[string]any{"query": "Greet"}})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "a/a.go:4:6") {
		t.Fatalf("lookup_symbol = %v, %v; stderr: %s", toolText(res), err, stderr.String())
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "diagnostics", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "2 file(s) checked: 0 error(s)") {
		t.Fatalf("diagnostics = %v, %v", toolText(res), err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "rename_symbol", Arguments: map[string]any{"symbol": "a.Greet", "new_name": "Hello"}})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "+\treturn a.Hello(\"x\")") {
		t.Fatalf("rename_symbol = %v, %v", toolText(res), err)
	}
	if data, _ := os.ReadFile(filepath.Join(e.workspace, "b", "b.go")); strings.Contains(string(data), "Hello") {
		t.Fatal("rename_symbol without apply wrote the file")
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "rename_symbol", Arguments: map[string]any{"symbol": "a.Greet", "new_name": "Hello", "apply": true}})
	if err != nil || res.IsError {
		t.Fatalf("rename_symbol apply = %v, %v", toolText(res), err)
	}
	if data, _ := os.ReadFile(filepath.Join(e.workspace, "b", "b.go")); !strings.Contains(string(data), `a.Hello("x")`) {
		t.Fatalf("after apply, b.go = %s", data)
	}
	// The pool was told: the project is still clean and knows the new name.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "diagnostics", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "0 error(s)") {
		t.Fatalf("diagnostics after the rename = %v, %v", toolText(res), err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "definition", Arguments: map[string]any{"symbol": "a.Hello"}})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "a/a.go:4") {
		t.Fatalf("definition of the new name = %v, %v", toolText(res), err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "outline", Arguments: map[string]any{"path": "../../etc/passwd"}})
	if err != nil || !res.IsError || !strings.HasPrefix(toolText(res), "MCP-PATH-OUTSIDE-PROJECT") {
		t.Fatalf("outline outside = %v, %v", toolText(res), err)
	}
}

func TestMCPRefusesPublicAddress(t *testing.T) {
	e := newEnv(t)
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:8080", ":8080"} {
		_, errs, code := e.run("mcp", "--http", addr)
		if code == 0 || !strings.Contains(errs, "only a loopback address is allowed") {
			t.Errorf("mcp --http %s: exit %d, %q", addr, code, errs)
		}
	}
	if _, errs, code := e.run("mcp", "--token-file", "x"); code == 0 || !strings.Contains(errs, "--token-file needs --http") {
		t.Errorf("mcp --token-file without --http: exit %d, %q", code, errs)
	}
	if out := e.ok("mcp", "--instructions"); !strings.Contains(out, "lookup_symbol") {
		t.Errorf("mcp --instructions = %q", out)
	}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func TestMCPOverHTTP(t *testing.T) {
	e := mcpEnv(t)
	tokenFile := e.write("token", "s3cret\n")
	cmd := exec.Command(darmanBin, "mcp", "--http", "127.0.0.1:0", "--token-file", tokenFile)
	cmd.Dir = e.workspace
	cmd.Env = e.vars
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	url := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), "darman mcp: serving "); ok {
			url, _, _ = strings.Cut(rest, " ")
			break
		}
	}
	if url == "" {
		t.Fatal("darman mcp --http printed no URL")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(mod func(*http.Request)) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer s3cret")
		mod(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(func(*http.Request) {}); code != http.StatusOK {
		t.Fatalf("a good initialize: %d", code)
	}
	if code := post(func(r *http.Request) { r.Header.Del("Authorization") }); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d; want 401", code)
	}
	if code := post(func(r *http.Request) { r.Header.Set("Authorization", "Bearer wrong") }); code != http.StatusUnauthorized {
		t.Errorf("with a wrong token: %d; want 401", code)
	}
	if code := post(func(r *http.Request) { r.Host = "evil.example.com" }); code != http.StatusForbidden {
		t.Errorf("with a spoofed Host: %d; want 403", code)
	}
	if code := post(func(r *http.Request) { r.Header.Set("Origin", "https://evil.example.com") }); code != http.StatusForbidden {
		t.Errorf("with a foreign Origin: %d; want 403", code)
	}
	if code := post(func(r *http.Request) { r.Header.Set("Origin", "http://localhost:3000") }); code != http.StatusOK {
		t.Errorf("with a loopback Origin: %d; want 200", code)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, version := range []string{"", "2025-11-25"} {
		transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect (version %q): %v", version, err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_symbol", Arguments: map[string]any{"query": "Greet"}})
		if err != nil || res.IsError {
			t.Fatalf("lookup_symbol over HTTP (version %q) = %v, %v", version, res, err)
		}
		data, _ := json.Marshal(res.StructuredContent)
		if !strings.Contains(string(data), `"schemaVersion":"1.0"`) || !strings.Contains(string(data), `"path":"a/a.go"`) {
			t.Fatalf("lookup_symbol over HTTP = %s", data)
		}
		cs.Close()
	}
}
