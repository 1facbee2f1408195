package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/internal/testenv"
)

// mcpEnv is a user's machine with a small Go module as the workspace and
// gopls on PATH.
func mcpEnv(t *testing.T) *env {
	e := newEnv(t)
	e.withGopls(t, true)
	e.greetModule()
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

// connectMCP starts the real darman mcp in dir, as an MCP client does,
// and connects to it; the session closes when the test ends. stderr is
// what darman printed, for failure messages.
func connectMCP(t *testing.T, e *env, dir string) (cs *mcp.ClientSession, ctx context.Context, stderr *testenv.Buffer) {
	t.Helper()
	cmd := exec.Command(darmanBin, "mcp")
	cmd.Dir = dir
	cmd.Env = e.vars
	stderr = new(testenv.Buffer)
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to darman mcp: %v; stderr: %s", err, stderr)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Logf("close: %v (stderr: %s)", err, stderr)
		}
	})
	return cs, ctx, stderr
}

// TestMCPOverStdio runs the real binary as an MCP client starts it, from
// a subdirectory of the project, and drives it with the go-sdk client.
func TestMCPOverStdio(t *testing.T) {
	e := mcpEnv(t)
	cs, ctx, stderr := connectMCP(t, e, filepath.Join(e.workspace, "b"))
	if cs.InitializeResult() != nil && !strings.Contains(cs.InitializeResult().Instructions, "names, not cursor positions") {
		t.Errorf("instructions = %q", cs.InitializeResult().Instructions)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 12 {
		t.Fatalf("tools/list = %v, %v", tools, err)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_symbol", Arguments: map[string]any{"query": "Greet"}})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "a/a.go:4:6") {
		t.Fatalf("lookup_symbol = %v, %v; stderr: %s", toolText(res), err, stderr.String())
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "diagnostics", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(toolText(res), "2 files checked: no problems") {
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
	if err != nil || res.IsError || !strings.Contains(toolText(res), "no problems") {
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

// startMCPHTTP starts `darman mcp --http` on a free loopback port in
// e's workspace with the token in tokenFile, and returns its URL; the
// process is interrupted when the test ends.
func startMCPHTTP(t *testing.T, e *env, tokenFile string) string {
	t.Helper()
	cmd := exec.Command(darmanBin, "mcp", "--http", "127.0.0.1:0", "--token-file", tokenFile)
	cmd.Dir = e.workspace
	cmd.Env = e.vars
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
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
	return url
}

func TestMCPOverHTTP(t *testing.T) {
	e := mcpEnv(t)
	url := startMCPHTTP(t, e, e.write("token", "s3cret\n"))
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
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "definition", Arguments: map[string]any{"symbol": "Greet"}})
		if err != nil || res.IsError {
			t.Fatalf("definition over HTTP (version %q) = %v, %v", version, res, err)
		}
		data, _ := json.Marshal(res.StructuredContent)
		if !strings.Contains(string(data), `"schemaVersion":"1.0"`) || !strings.Contains(string(data), `"path":"a/a.go"`) {
			t.Fatalf("definition over HTTP = %s", data)
		}
		cs.Close()
	}
}

// npmClient is a program of an MCP client that `make deps` installs into
// the repository's .cache/npm; the test skips when it or node is missing.
func npmClient(t *testing.T, bin string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", ".cache", "npm", "node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed: run `make deps` (npm install --prefix .cache/npm @modelcontextprotocol/inspector-cli@1.0.3 @modelcontextprotocol/conformance@0.1.16)", bin)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: run `make deps`")
	}
	return p
}

// inspector runs the MCP inspector CLI (v1.0.3) in the workspace and
// decodes the JSON result it prints.
func inspector(t *testing.T, e *env, args ...string) map[string]any {
	t.Helper()
	bin := npmClient(t, "mcp-inspector-cli")
	// The CLI looks for its own package.json at ../package.json relative to
	// the working directory but imports it relative to its own file: any
	// file there makes it take the right one (its fallback path is wrong).
	e.write(filepath.Join(e.home, "package.json"), "{}\n")
	cmd := exec.Command(bin, append([]string{"--cli"}, args...)...)
	cmd.Dir = e.workspace
	cmd.Env = e.vars
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp-inspector-cli %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("mcp-inspector-cli %s printed no JSON: %v\n%s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return out
}

// inspectorText is the text content of a tools/call result the
// inspector printed, and whether it was an error.
func inspectorText(t *testing.T, res map[string]any) (string, bool) {
	t.Helper()
	var b strings.Builder
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok && m["type"] == "text" {
			b.WriteString(m["text"].(string))
		}
	}
	isErr, _ := res["isError"].(bool)
	return b.String(), isErr
}

// TestMCPInspectorCLI drives the real binary with the MCP project's own
// inspector CLI, as a user checking their set-up would: over stdio (the
// inspector starts darman) and over streamable HTTP with the token.
func TestMCPInspectorCLI(t *testing.T) {
	e := mcpEnv(t)
	stdio := []string{darmanBin, "mcp"}

	list := inspector(t, e, append(stdio, "--method", "tools/list")...)
	tools, _ := list["tools"].([]any)
	var names []string
	for _, tool := range tools {
		m := tool.(map[string]any)
		names = append(names, m["name"].(string))
		if ann, _ := m["annotations"].(map[string]any); ann == nil {
			t.Errorf("tool %s has no annotations", m["name"])
		}
	}
	want := "check_source definition describe_symbol diagnostics explain_diagnostic find_references format_source list_imports lookup_symbol outline package_api rename_symbol"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("tools/list = %s\nwant %s", got, want)
	}

	call := func(args ...string) (string, map[string]any) {
		t.Helper()
		res := inspector(t, e, append(stdio, append([]string{"--method", "tools/call", "--tool-name"}, args...)...)...)
		text, isErr := inspectorText(t, res)
		if isErr {
			t.Fatalf("tools/call %v is an error: %s", args, text)
		}
		sc, _ := res["structuredContent"].(map[string]any)
		switch args[0] {
		case "diagnostics", "check_source", "lookup_symbol", "find_references", "package_api": // text only
			if sc != nil {
				t.Errorf("tools/call %v: structuredContent = %v; want none (the answer is text only)", args, sc)
			}
		default:
			if sc["schemaVersion"] != "1.0" {
				t.Errorf("tools/call %v: structuredContent = %v; want schemaVersion 1.0", args, sc)
			}
		}
		return text, sc
	}
	if text, sc := call("lookup_symbol", "--tool-arg", "query=Greet", "--tool-arg", "limit=5"); text != "a/a.go:4:6 func Greet(name string) string" {
		t.Errorf("lookup_symbol = %s / %v", text, sc)
	}
	broken := "package b\n\nfunc Count() int {\n\treturn \"three\"\n}\n"
	if text, _ := call("check_source", "--tool-arg", "path=b/count.go", "--tool-arg", "source="+broken); !strings.HasPrefix(text, "b/count.go: 1 error\n4:9 [IncompatibleAssign]: ") {
		t.Errorf("check_source = %s", text)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "b", "count.go")); !os.IsNotExist(err) {
		t.Errorf("check_source wrote b/count.go (stat: %v)", err)
	}
	if text, _ := call("diagnostics"); !strings.Contains(text, "2 files checked: no problems") {
		t.Errorf("diagnostics = %s", text)
	}
	if text, _ := call("rename_symbol", "--tool-arg", "symbol=a.Greet", "--tool-arg", "new_name=Hello"); !strings.Contains(text, "+\treturn a.Hello(\"x\")") {
		t.Errorf("rename_symbol = %s", text)
	}
	if data, _ := os.ReadFile(filepath.Join(e.workspace, "b", "b.go")); strings.Contains(string(data), "Hello") {
		t.Error("rename_symbol without apply wrote b/b.go")
	}

	url := startMCPHTTP(t, e, e.write("token", "s3cret\n"))
	res := inspector(t, e, url, "--transport", "http", "--header", "Authorization: Bearer s3cret",
		"--method", "tools/call", "--tool-name", "find_references", "--tool-arg", "symbol=a.Greet")
	if text, isErr := inspectorText(t, res); isErr || !strings.Contains(text, "b/b.go:7:") {
		t.Errorf("find_references over HTTP = %s (isError %v)", text, isErr)
	}
}

// conformanceShim lets the conformance suite (which imports fs.globSync,
// Node 22) run on Node 20: scripts/node20-conformance answers its `fs`
// import with node:fs plus a globSync that only its tier-check command
// calls.
func conformanceShim(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "scripts", "node20-conformance", "register.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// conformanceNotApplicable are the server scenarios of
// @modelcontextprotocol/conformance 0.1.16 that exercise the suite's own
// fixtures (tools, prompts and resources of its reference server, named
// test_*): darman mcp has none of them, so each must fail only by saying
// so, with a proper JSON-RPC error.
var conformanceNotApplicable = map[string]string{
	"completion-complete":           `method not found: "completion/complete"`, // completes prompt and resource-template arguments; darman mcp has neither
	"tools-call-simple-text":        `unknown tool "test_simple_text"`,
	"tools-call-image":              `unknown tool "test_image_content"`,
	"tools-call-audio":              `unknown tool "test_audio_content"`,
	"tools-call-embedded-resource":  `unknown tool "test_embedded_resource"`,
	"tools-call-mixed-content":      `unknown tool "test_multiple_content_types"`,
	"tools-call-with-logging":       `unknown tool "test_tool_with_logging"`,
	"tools-call-error":              `unknown tool "test_error_handling"`,
	"tools-call-with-progress":      `unknown tool "test_tool_with_progress"`,
	"tools-call-sampling":           `unknown tool "test_sampling"`,
	"tools-call-elicitation":        `unknown tool "test_elicitation"`,
	"elicitation-sep1034-defaults":  `unknown tool "test_elicitation_sep1034_defaults"`,
	"elicitation-sep1330-enums":     `unknown tool "test_elicitation_sep1330_enums"`,
	"resources-read-text":           "Resource not found",
	"resources-read-binary":         "Resource not found",
	"resources-templates-read":      "Resource not found",
	"resources-subscribe":           `method not found: "resources/subscribe"`,
	"resources-unsubscribe":         `method not found: "resources/subscribe"`,
	"prompts-get-simple":            `unknown prompt "test_simple_prompt"`,
	"prompts-get-with-args":         `unknown prompt "test_prompt_with_arguments"`,
	"prompts-get-embedded-resource": `unknown prompt "test_prompt_with_embedded_resource"`,
	"prompts-get-with-image":        `unknown prompt "test_prompt_with_image"`,
	// Pending scenarios (--suite all), on fixture tools too. The second
	// needs test_reconnection and reports warnings only: never a failure.
	"json-schema-2020-12": "Tool 'json_schema_2020_12_tool' not found",
	"server-sse-polling":  "",
}

// conformancePass are the generic server scenarios: every check of each
// must succeed.
var conformancePass = []string{
	"server-initialize", "logging-set-level", "ping", "tools-list", "server-sse-multiple-streams",
	"resources-list", "prompts-list", "dns-rebinding-protection",
}

// TestMCPConformance runs the server side of the MCP conformance suite
// (pinned, 0.1.16, every scenario including the pending ones) against
// `darman mcp --http`. The suite's client sends no token, so a reverse
// proxy in front adds it and passes Host and Origin through untouched,
// which keeps dns-rebinding-protection a test of darman itself.
func TestMCPConformance(t *testing.T) {
	bin := npmClient(t, "conformance")
	e := mcpEnv(t)
	url := startMCPHTTP(t, e, e.write("token", "s3cret\n"))
	target, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	proxy, trace := tracingProxy(target)
	defer proxy.Close()
	defer func() {
		if t.Failed() {
			t.Logf("what went through the proxy:\n%s", trace)
		}
	}()

	out := t.TempDir()
	cmd := exec.Command("node", "--import", conformanceShim(t), bin, "server", "--url", proxy.URL+"/mcp", "--suite", "all", "-o", out)
	cmd.Env = e.vars
	report, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed every scenario, fixtures included; update the lists:\n%s", report)
	}
	dirs, _ := os.ReadDir(out)
	results := map[string][]struct {
		ID, Status, ErrorMessage string
	}{}
	stamp := regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT`)
	for _, d := range dirs {
		m := stamp.FindStringSubmatch(d.Name())
		if m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct{ ID, Status, ErrorMessage string }
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		results[m[1]] = checks
	}
	for _, name := range conformancePass {
		checks, ok := results[name]
		if !ok || len(checks) == 0 {
			t.Errorf("scenario %s did not run\n%s", name, report)
		}
		for _, c := range checks {
			if c.Status != "SUCCESS" {
				t.Errorf("scenario %s: check %s is %s: %s", name, c.ID, c.Status, c.ErrorMessage)
			}
		}
	}
	for name, why := range conformanceNotApplicable {
		checks, ok := results[name]
		if !ok {
			t.Errorf("scenario %s did not run\n%s", name, report)
		}
		for _, c := range checks {
			if c.Status == "FAILURE" && (why == "" || !strings.Contains(c.ErrorMessage, why)) {
				t.Errorf("scenario %s: check %s failed with %q; want it to fail only with %q", name, c.ID, c.ErrorMessage, why)
			}
		}
	}
	for name := range results {
		if _, ok := conformanceNotApplicable[name]; !ok && !slices.Contains(conformancePass, name) {
			t.Errorf("scenario %s is new to this test: classify it", name)
		}
	}
}

// TestMCPTypeScript: the same tools on a small TypeScript project through
// the real binary, with typescript-language-server and TypeScript 6.
func TestMCPTypeScript(t *testing.T) {
	e := newEnv(t)
	e.prependPath(npmBin(t, "typescript-language-server", "tsc"))
	e.write("package.json", `{"name": "shop", "private": true}`+"\n")
	e.write("tsconfig.json", `{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["src"]}`+"\n")
	e.write("src/price.ts", "/** The price with tax. */\nexport function withTax(cents: number): number {\n  return Math.round(cents * 1.2);\n}\n\nexport function withTaxRounded(cents: number): number {\n  return withTax(cents);\n}\n")
	e.write("src/cart.ts", "import { withTax } from \"./price\";\n\nexport function total(items: number[]): number {\n  return items.map(withTax).reduce((a, b) => a + b, 0);\n}\n\nexport function priceWithTax(cents: number): number {\n  return withTax(cents);\n}\n")
	e.write("src/price.test.ts", "export function withTax() {}\n")

	cs, ctx, stderr := connectMCP(t, e, e.workspace)
	call := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s(%v) = %v, %v; stderr: %s", name, args, toolText(res), err, stderr.String())
		}
		return toolText(res)
	}

	// The first query goes to a cold tsserver: the pool waits for it to
	// have loaded the project, or references in files not yet open would
	// be missed.
	if text := call("find_references", map[string]any{"symbol": "withTax", "path": "src/price.ts"}); !strings.Contains(text, "src/cart.ts:1:10") || !strings.Contains(text, "src/cart.ts:4:20") {
		t.Errorf("find_references withTax =\n%s", text)
	}
	// The same ranking as gopls's answers: the exact name alone, the
	// code's before the test's, then what starts with it.
	if text := call("lookup_symbol", map[string]any{"query": "withTax"}); !regexp.MustCompile(`^src/price.ts:2:\d+ export function withTax\(cents: number\): number\nsrc/price.test.ts:1:\d+ export function withTax\(\) \(test\)\n\+2 fuzzy \(fuzzy: true\)$`).MatchString(text) {
		t.Errorf("lookup_symbol withTax =\n%s", text)
	}
	if text := call("lookup_symbol", map[string]any{"query": "withta"}); !regexp.MustCompile(`^src/price.ts:2:\d+ export function withTax.*\nsrc/price.ts:6:\d+ export function withTaxRounded.*\nsrc/price.test.ts:1:\d+ .*\(test\)\nsrc/cart.ts:\d+:\d+ export function priceWithTax`).MatchString(text) {
		t.Errorf("lookup_symbol withta =\n%s", text)
	}
	// The budget: a limit cuts the list and the note says how to get the rest.
	if text := call("lookup_symbol", map[string]any{"query": "withta", "limit": 1}); !regexp.MustCompile(`^src/price.ts:2:\d+ export function withTax\(cents: number\): number\n\+3 more \(limit: 4\)$`).MatchString(text) {
		t.Errorf("lookup_symbol withta limit 1 =\n%s", text)
	}
	// A directory's exported API, from tsserver's outline of each file.
	if text := call("package_api", map[string]any{"path": "src"}); text != "src: 4 exported declarations in 2 files\n"+
		"cart.ts\n3 export function total(items: number[]): number\n7 export function priceWithTax(cents: number): number\n"+
		"price.ts\n2 export function withTax(cents: number): number // The price with tax.\n6 export function withTaxRounded(cents: number): number\n"+
		"not listed: 1 test file (tests: true)" {
		t.Errorf("package_api src =\n%s", text)
	}
	if text := call("list_imports", map[string]any{"path": "src/cart.ts"}); !strings.Contains(text, "./price") || !strings.Contains(text, "src/price.ts") {
		t.Errorf("list_imports of src/cart.ts =\n%s", text)
	}
	broken := "import { withTax } from \"./price\";\n\nexport const label: string = withTax(100);\n"
	if text := call("check_source", map[string]any{"path": "src/label.ts", "source": broken}); !strings.Contains(text, "src/label.ts: 1 error\n3:14 [2322]: ") {
		t.Errorf("check_source of a number assigned to a string =\n%s", text)
	}
	fixed := "import { withTax } from \"./price\";\n\nexport const label: string = String(withTax(100));\n"
	if text := call("check_source", map[string]any{"path": "src/label.ts", "source": fixed}); !strings.Contains(text, "src/label.ts: no problems") {
		t.Errorf("check_source of the fixed text =\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "src", "label.ts")); !os.IsNotExist(err) {
		t.Errorf("check_source wrote src/label.ts (stat: %v)", err)
	}
	if text := call("diagnostics", nil); !strings.Contains(text, "3 files checked: no problems") {
		t.Errorf("diagnostics =\n%s", text)
	}

	if text := call("rename_symbol", map[string]any{"symbol": "withTax", "path": "src/price.ts", "new_name": "addTax"}); !strings.Contains(text, "+import { addTax } from \"./price\";") || !strings.Contains(text, "+export function addTax(") {
		t.Errorf("rename_symbol withTax =\n%s", text)
	}
	if data, _ := os.ReadFile(filepath.Join(e.workspace, "src", "cart.ts")); strings.Contains(string(data), "addTax") {
		t.Error("rename_symbol without apply wrote src/cart.ts")
	}

	// The inspector CLI starts a darman of its own: a cold tsserver again.
	res := inspector(t, e, darmanBin, "mcp", "--method", "tools/call", "--tool-name", "lookup_symbol", "--tool-arg", "query=total")
	if text, isErr := inspectorText(t, res); isErr || !strings.Contains(text, "src/cart.ts:3:") || !strings.Contains(text, "export function total(items: number[]): number") {
		t.Errorf("lookup_symbol through the inspector = %s (isError %v)", text, isErr)
	}
}

// TestMCPPython: pyright's answers go through the same ranking as
// gopls's and tsserver's: the exact name first and alone, code before
// tests, then prefix before partial matches, one line each with the
// signature.
func TestMCPPython(t *testing.T) {
	e := newEnv(t)
	e.prependPath(npmBin(t, "pyright-langserver"))
	e.write("pyproject.toml", "[project]\nname = \"shop\"\nversion = \"0.1\"\n")
	e.write("shop/__init__.py", "")
	e.write("shop/price.py", "def with_tax(cents: int) -> int:\n    return round(cents * 1.2)\n\n\ndef with_tax_rounded(cents: int) -> int:\n    return with_tax(cents)\n")
	e.write("shop/cart.py", "from shop.price import with_tax\n\n\ndef price_with_tax(items: list[int]) -> int:\n    return sum(with_tax(i) for i in items)\n")
	e.write("tests/helpers.py", "def with_tax(cents):\n    return cents\n")

	cs, ctx, stderr := connectMCP(t, e, e.workspace)
	call := func(args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup_symbol", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("lookup_symbol(%v) = %v, %v; stderr: %s", args, toolText(res), err, stderr.String())
		}
		return toolText(res)
	}
	if text := call(map[string]any{"query": "with_tax"}); !regexp.MustCompile(`^shop/price.py:1:\d+ def with_tax\(cents: int\) -> int\ntests/helpers.py:1:\d+ def with_tax\(cents\) \(test\)\n\+\d+ fuzzy \(fuzzy: true\)$`).MatchString(text) {
		t.Errorf("lookup_symbol with_tax =\n%s", text)
	}
	if text := call(map[string]any{"query": "with_ta"}); !regexp.MustCompile(`^shop/price.py:1:\d+ def with_tax\(.*\nshop/price.py:5:\d+ def with_tax_rounded\(.*\ntests/helpers.py:1:\d+ def with_tax\(cents\) \(test\)\nshop/cart.py:4:\d+ def price_with_tax\(items: list\[int\]\) -> int`).MatchString(text) {
		t.Errorf("lookup_symbol with_ta =\n%s", text)
	}
	if text := call(map[string]any{"query": "with_ta", "limit": 2}); !regexp.MustCompile(`^shop/price.py:1:\d+ def with_tax\(.*\nshop/price.py:5:\d+ def with_tax_rounded\(.*\n\+2 more \(limit: 4\)$`).MatchString(text) {
		t.Errorf("lookup_symbol with_ta limit 2 =\n%s", text)
	}
	// A package's API from pyright's outline: public names, the docstring's
	// first sentence, a class's public methods under it.
	e.write("shop/till.py", "class Till:\n    \"\"\"A cash register. It keeps cents.\"\"\"\n\n    def __init__(self) -> None:\n        self._cents = 0\n\n    def ring(self, cents: int) -> int:\n        return cents\n\n    def _audit(self) -> None:\n        pass\n\n\ndef _private() -> None:\n    pass\n")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "package_api", Arguments: map[string]any{"path": "shop"}})
	want := "shop: 6 exported declarations in 4 files\n" +
		"cart.py\n4 def price_with_tax(items: list[int]) -> int\n" +
		"price.py\n1 def with_tax(cents: int) -> int\n5 def with_tax_rounded(cents: int) -> int\n" +
		"till.py\n1 class Till // A cash register.\n  4 def __init__(self) -> None\n  7 def ring(self, cents: int) -> int"
	if err != nil || res.IsError || toolText(res) != want {
		t.Errorf("package_api shop = %v, %v\nwant\n%s", toolText(res), err, want)
	}
}

// tracingProxy is the conformance suite's way to darman mcp: it adds the
// bearer token the suite cannot send, and keeps a line per request (its
// session, Last-Event-ID, status, time) and every copy error, for a
// failure to show which side of a connection broke.
func tracingProxy(target *neturl.URL) (*httptest.Server, *proxyTrace) {
	tr := &proxyTrace{start: time.Now()}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.URL.Path = target.Path
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer s3cret")
		},
		FlushInterval: -1,
		ErrorLog:      log.New(tr, "proxy: ", 0),
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The Transport may still be reading the request's body (to its
		// EOF) when the answer's first bytes are passed on; Go's HTTP/1
		// server refuses body reads once the response has begun unless
		// told otherwise, and the Transport then closed the upstream
		// connection mid-answer (persistConn.writeLoop).
		http.NewResponseController(w).EnableFullDuplex()
		sw := &statusWriter{ResponseWriter: w}
		begin := time.Now()
		fmt.Fprintf(tr, "-> %s session=%q last-event-id=%q", r.Method, r.Header.Get("Mcp-Session-Id"), r.Header.Get("Last-Event-ID"))
		defer func() {
			// A copy error after the headers aborts the handler by panic.
			fmt.Fprintf(tr, "<- %s session=%q: %d after %v, client's context: %v", r.Method, r.Header.Get("Mcp-Session-Id"), sw.code, time.Since(begin), context.Cause(r.Context()))
		}()
		rp.ServeHTTP(sw, r)
	})), tr
}

type proxyTrace struct {
	mu    sync.Mutex
	start time.Time
	lines []string
}

func (p *proxyTrace) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines = append(p.lines, fmt.Sprintf("%8.3fs %s", time.Since(p.start).Seconds(), strings.TrimSpace(string(b))))
	return len(b), nil
}

func (p *proxyTrace) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) { w.code = code; w.ResponseWriter.WriteHeader(code) }
func (w *statusWriter) Flush()               { w.ResponseWriter.(http.Flusher).Flush() }
