package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/testenv"
	"github.com/darman-dev/darman/server/rpc/rpctest"
)

// acpWait bounds every wait on darman acp; it only guards against a hang.
const acpWait = 30 * time.Second

// acpClient is an ACP client driving the real `darman acp` over its stdio,
// with newline-delimited JSON-RPC (rpctest): it records what darman sends
// and answers darman's requests with answer.
type acpClient struct {
	*rpctest.Client
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan error
	stderr *testenv.Buffer
}

type acpNote = rpctest.Message

type stdio struct {
	io.Reader
	io.WriteCloser
}

func startACP(t *testing.T, e *env, answer func(string, json.RawMessage) (any, error)) *acpClient {
	t.Helper()
	cmd := exec.Command(darmanBin, "acp")
	cmd.Env = e.vars
	return startACPCommand(t, e, cmd, answer)
}

// startACPCommand drives cmd, an ACP agent's command line as a client
// runs it (its Env set), in the workspace.
func startACPCommand(t *testing.T, e *env, cmd *exec.Cmd, answer func(string, json.RawMessage) (any, error)) *acpClient {
	t.Helper()
	cmd.Dir = e.workspace
	cmd.SysProcAttr = noTerminal()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &acpClient{t: t, cmd: cmd, stdin: stdin, exited: make(chan error, 1), stderr: &testenv.Buffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- cmd.Wait() }()
	// Whatever the test does not answer is a method this client lacks.
	notFound := func(method string, params json.RawMessage) (any, error) {
		res, err := answer(method, params)
		if err != nil {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: err.Error()}
		}
		return res, nil
	}
	c.Client = rpctest.New(context.Background(), t, stdio{stdout, stdin}, rpctest.Options{Codec: rpctest.ACP, Answer: notFound, Wait: acpWait, Peer: "darman acp"})
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(acpWait):
			cmd.Process.Kill()
			t.Error("darman acp did not end after stdin closed")
		}
	})
	return c
}

func (c *acpClient) mustCall(method string, params, result any) {
	c.t.Helper()
	if err := c.Call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v\nstderr: %s", method, err, c.stderr)
	}
}

// await waits for a message from darman that match accepts.
func (c *acpClient) await(what string, match func(acpNote) bool) acpNote {
	c.t.Helper()
	n, _ := c.Await(0, what, match)
	return n
}

// updates are the session/update payloads of a kind.
func (c *acpClient) updates(kind string) []string {
	var out []string
	for _, n := range c.All("session/update") {
		var p struct {
			Update json.RawMessage `json:"update"`
		}
		json.Unmarshal(n.Params, &p)
		if strings.Contains(string(p.Update), `"sessionUpdate":"`+kind+`"`) {
			out = append(out, string(p.Update))
		}
	}
	return out
}

func (c *acpClient) newSession(cwd string, mcpServers ...map[string]any) string {
	c.t.Helper()
	if mcpServers == nil {
		mcpServers = []map[string]any{}
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	c.mustCall("session/new", map[string]any{"cwd": cwd, "mcpServers": mcpServers}, &res)
	return res.SessionID
}

func (c *acpClient) prompt(id, text string) string {
	c.t.Helper()
	var res struct {
		StopReason string `json:"stopReason"`
	}
	c.mustCall("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": text}}}, &res)
	return res.StopReason
}

// acpScript is the model of the ACP scenario, by the first prompt of each
// conversation.
func acpScript() llmtest.Script {
	return llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "write and test", Steps: []llmtest.Step{
			{Text: "Writing.", ToolCalls: []llmtest.ToolCall{call("write", `{"path":"out.txt","content":"from darman\n"}`)}},
			{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"echo in-the-terminal","description":"say hello"}`)}},
			{Text: "All done."},
		}},
		{Match: "stall", Steps: []llmtest.Step{{Text: "Starting a long answer", Faults: []llmtest.Fault{{Kind: llmtest.FaultStall, After: 4, Times: -1}}}}},
		{Match: "use the server", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("everything_echo", `{"message":"hello over acp"}`)}},
			{Text: "Echoed."},
		}},
		{Match: "no server here", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{call("everything_echo", `{"message":"nobody"}`)}},
			{Text: "No such tool."},
		}},
	}}
}

// TestACPScenario drives the real darman acp as an editor would: a
// session whose turn asks for a permission (answered), writes through
// fs/write_text_file (darman leaves the disk alone) and runs bash in the
// client's terminal; a turn cancelled mid-answer; the session loaded again
// by a second darman acp, its history replayed; and stdin closed during a
// turn, which darman stores as cancelled before it exits.
func TestACPScenario(t *testing.T) {
	e := newEnv(t)
	e.write(".git/config", "[core]\n")
	srv := e.withModel(t, acpScript())
	var mu sync.Mutex
	written := map[string]string{}
	var terminal map[string]any
	var terminalOut string
	answer := func(method string, params json.RawMessage) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		var p map[string]any
		json.Unmarshal(params, &p)
		switch method {
		case "session/request_permission":
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
		case "fs/read_text_file":
			b, err := os.ReadFile(fmt.Sprint(p["path"]))
			if err != nil {
				return nil, err
			}
			return map[string]string{"content": string(b)}, nil
		case "fs/write_text_file":
			written[fmt.Sprint(p["path"])] = fmt.Sprint(p["content"])
			return map[string]any{}, nil
		case "terminal/create":
			terminal = p
			// Run the command line as a client's terminal would: the
			// program and arguments darman handed over, with its env.
			var args []string
			for _, a := range p["args"].([]any) {
				args = append(args, fmt.Sprint(a))
			}
			cmd := exec.Command(fmt.Sprint(p["command"]), args...)
			cmd.Dir = fmt.Sprint(p["cwd"])
			cmd.Env = e.vars
			if env, ok := p["env"].([]any); ok {
				for _, v := range env {
					kv := v.(map[string]any)
					cmd.Env = append(cmd.Env, fmt.Sprint(kv["name"])+"="+fmt.Sprint(kv["value"]))
				}
			}
			out, err := cmd.CombinedOutput()
			terminalOut = string(out)
			if err != nil {
				terminalOut += "\n" + err.Error()
			}
			return map[string]string{"terminalId": "t1"}, nil
		case "terminal/wait_for_exit":
			return map[string]any{"exitCode": 0}, nil
		case "terminal/output":
			return map[string]any{"output": terminalOut, "truncated": false, "exitStatus": map[string]any{"exitCode": 0}}, nil
		case "terminal/release", "terminal/kill":
			return map[string]any{}, nil
		}
		return nil, fmt.Errorf("unexpected %s", method)
	}
	c := startACP(t, e, answer)
	var init struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	c.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
		"fs": map[string]bool{"readTextFile": true, "writeTextFile": true}, "terminal": true}}, &init)
	if init.ProtocolVersion != 1 {
		t.Fatalf("protocolVersion %d", init.ProtocolVersion)
	}
	id := c.newSession(e.workspace)
	if stop := c.prompt(id, "write and test"); stop != "end_turn" {
		t.Fatalf("stopReason %q\nstderr: %s", stop, c.stderr)
	}
	out := filepath.Join(e.workspace, "out.txt")
	mu.Lock()
	if written[out] != "from darman\n" {
		t.Errorf("fs/write_text_file: %v", written)
	}
	// The command line handed to the client's terminal is wrapped in
	// darman's sandbox helper where there is a sandbox, and runs.
	if terminal["cwd"] != e.workspace || terminalOut != "in-the-terminal\n" {
		t.Errorf("terminal/create: %v; the client's run printed %q", terminal, terminalOut)
	}
	shell, _, _ := tool.Shell()
	if args := fmt.Sprint(terminal["args"]); terminal["command"] != shell && (terminal["command"] != darmanBin || !strings.HasPrefix(args, "[sandbox-exec ")) {
		t.Errorf("terminal/create runs %v %v, want the bash tool's shell (%s) or darman sandbox-exec", terminal["command"], args, shell)
	}
	// On Linux the sandbox is on by default (Landlock), so the client gets
	// the wrapped form, never plain bash.
	if runtime.GOOS == "linux" && terminal["command"] != darmanBin {
		t.Errorf("terminal/create runs %v %v with the sandbox active; want darman sandbox-exec", terminal["command"], terminal["args"])
	}
	if terminal["command"] == darmanBin {
		// The same wrapped command line confines what the client runs:
		// nothing outside the workspace, nor the protected .git/config.
		outside := filepath.Join(t.TempDir(), "marker")
		args := terminal["args"].([]any)
		for _, hostile := range []string{"echo pwned > " + outside, "echo '[core] fsmonitor = evil' >> .git/config"} {
			argv := []string{}
			for _, a := range args[:len(args)-1] {
				argv = append(argv, fmt.Sprint(a))
			}
			cmd := exec.Command(darmanBin, append(argv, hostile)...)
			cmd.Dir, cmd.Env = e.workspace, e.vars
			if out, err := cmd.CombinedOutput(); err == nil {
				t.Errorf("the client's terminal ran %q: %s", hostile, out)
			}
		}
		if _, err := os.Stat(outside); err == nil {
			t.Error("a command in the client's terminal wrote outside the workspace")
		}
		if b, _ := os.ReadFile(filepath.Join(e.workspace, ".git", "config")); string(b) != "[core]\n" {
			t.Errorf(".git/config = %q", b)
		}
	}
	mu.Unlock()
	if _, err := os.Stat(out); err == nil {
		t.Error("darman wrote out.txt to the disk itself")
	}
	if n := len(c.All("session/request_permission")); n != 1 {
		t.Errorf("%d permission requests, want 1 (the write; echo is allowed by the default rules)", n)
	}
	calls := srv.ModelCalls()
	if !strings.Contains(string(calls[len(calls)-1].Body), "in-the-terminal") {
		t.Error("the terminal's output did not reach the model")
	}

	// Cancel mid-turn.
	stalled := c.newSession(e.workspace)
	done := make(chan string, 1)
	go func() {
		var res struct {
			StopReason string `json:"stopReason"`
		}
		if err := c.Call("session/prompt", map[string]any{"sessionId": stalled, "prompt": []map[string]any{{"type": "text", "text": "stall now"}}}, &res); err != nil {
			done <- err.Error()
			return
		}
		done <- res.StopReason
	}()
	c.await("the stalled turn's first chunk", func(n acpNote) bool {
		return n.Method == "session/update" && strings.Contains(string(n.Params), stalled) && strings.Contains(string(n.Params), "agent_message_chunk")
	})
	c.Conn.Notify(context.Background(), "session/cancel", map[string]any{"sessionId": stalled})
	if got := <-done; got != "cancelled" {
		t.Fatalf("cancelled turn: %q", got)
	}

	// A turn still running when the client goes away.
	last := c.newSession(e.workspace)
	go c.Call("session/prompt", map[string]any{"sessionId": last, "prompt": []map[string]any{{"type": "text", "text": "stall at exit"}}}, nil)
	c.await("the last turn's first chunk", func(n acpNote) bool {
		return n.Method == "session/update" && strings.Contains(string(n.Params), last) && strings.Contains(string(n.Params), "agent_message_chunk")
	})
	c.stdin.Close()
	select {
	case err := <-c.exited:
		if err != nil {
			t.Fatalf("darman acp ended with %v\nstderr: %s", err, c.stderr)
		}
	case <-time.After(acpWait):
		t.Fatal("darman acp did not end after stdin closed")
	}
	c.exited <- nil // for the cleanup
	if show := e.ok("sessions", "show", last); !strings.Contains(show, "[cancelled]") {
		t.Errorf("the turn cut short by EOF is not stored as cancelled:\n%s", show)
	}

	// A second darman acp loads the first session and the one cut short.
	d := startACP(t, e, answer)
	d.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	d.mustCall("session/load", map[string]any{"sessionId": id, "cwd": e.workspace, "mcpServers": []any{}}, nil)
	if users := d.updates("user_message_chunk"); len(users) != 1 || !strings.Contains(users[0], "write and test") {
		t.Errorf("replayed user messages: %v", users)
	}
	replayed := strings.Join(d.updates("agent_message_chunk"), "")
	if !strings.Contains(replayed, "Writing.") || !strings.Contains(replayed, "All done.") || len(d.updates("tool_call")) != 2 {
		t.Errorf("replayed: %s / %d tool calls", replayed, len(d.updates("tool_call")))
	}
	d.mustCall("session/load", map[string]any{"sessionId": last, "cwd": e.workspace, "mcpServers": []any{}}, nil)
	if users := d.updates("user_message_chunk"); len(users) != 2 || !strings.Contains(users[1], "stall at exit") {
		t.Errorf("the turn cut short by EOF was not stored: %v", users)
	}
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
		} `json:"sessions"`
	}
	d.mustCall("session/list", map[string]any{"cwd": e.workspace}, &list)
	if len(list.Sessions) != 3 {
		t.Errorf("session/list: %+v", list)
	}
}

// TestACPSessionMCPServer: the MCP server a client names in session/new
// (the reference "everything" server from npm) serves that session's
// turns, not another session's, and stops when darman acp ends.
func TestACPSessionMCPServer(t *testing.T) {
	bin, _ := filepath.Abs("../../.cache/npm/node_modules/.bin/mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("the MCP reference server is not installed: run `make deps`")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: run `make deps`")
	}
	e := newEnv(t)
	srv := e.withModel(t, acpScript())
	// A wrapper with a name of this test's own, to find the server among
	// the machine's processes.
	wrapper := filepath.Join(t.TempDir(), fmt.Sprintf("everything-acp-%d", time.Now().UnixNano()))
	os.WriteFile(wrapper, []byte("#!/bin/sh\n"+bin+" \"$@\"\n"), 0o755)
	c := startACP(t, e, func(method string, params json.RawMessage) (any, error) {
		if method == "session/request_permission" {
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
		}
		return nil, fmt.Errorf("unexpected %s", method)
	})
	c.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	with := c.newSession(e.workspace, map[string]any{"name": "everything", "command": wrapper, "args": []string{}, "env": []any{}})
	without := c.newSession(e.workspace)
	if stop := c.prompt(with, "use the server"); stop != "end_turn" {
		t.Fatal(stop)
	}
	if stop := c.prompt(without, "no server here"); stop != "end_turn" {
		t.Fatal(stop)
	}
	offered := map[string]bool{} // by prompt: was everything_echo among the tools
	results := map[string]string{}
	for _, call := range srv.ModelCalls() {
		var body struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		json.Unmarshal(call.Body, &body)
		for _, m := range []string{"use the server", "no server here"} {
			if !strings.Contains(string(call.Body), m) {
				continue
			}
			results[m] += string(call.Body)
			for _, tl := range body.Tools {
				if tl.Name == "everything_echo" {
					offered[m] = true
				}
			}
		}
	}
	if !offered["use the server"] || !strings.Contains(results["use the server"], "Echo: hello over acp") {
		t.Errorf("the session's MCP server did not serve its turn:\n%.3000s", results["use the server"])
	}
	if offered["no server here"] || !strings.Contains(results["no server here"], "There is no tool named") {
		t.Errorf("the other session was offered the session's MCP server")
	}
	if ps, _ := exec.Command("ps", "-eo", "args").Output(); !strings.Contains(string(ps), wrapper) {
		t.Fatal("the session's MCP server is not running (the check below would prove nothing)")
	}
	c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(acpWait):
		t.Fatal("darman acp did not end")
	}
	c.exited <- nil
	if ps, _ := exec.Command("ps", "-eo", "args").Output(); strings.Contains(string(ps), wrapper) {
		t.Errorf("the session's MCP server is still running after darman acp ended")
	}
}

// TestACPMalformedInput writes broken lines to darman acp: each gets an
// error answer and darman goes on serving.
func TestACPMalformedInput(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(darmanBin, "acp")
	cmd.Dir = e.workspace
	cmd.Env = e.vars
	cmd.SysProcAttr = noTerminal()
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{not json`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"nope"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"relative","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":4,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":5,"method":"session/list","params":{"cwd":` + fmt.Sprintf("%q", e.workspace) + `}}`,
	}, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	answers := map[string]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("darman wrote a line that is not JSON: %q", sc.Text())
		}
		answers[fmt.Sprint(m["id"])] = m
	}
	code := func(id string) float64 {
		e, _ := answers[id]["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	if code("<nil>") != -32700 || code("2") != -32002 || code("3") != -32602 || code("4") != -32601 {
		t.Errorf("answers:\n%s", stdout)
	}
	if answers["1"]["result"] == nil || answers["5"]["result"] == nil {
		t.Errorf("darman did not go on serving:\n%s", stdout)
	}
}

// TestACPWithTheOfficialSDK runs server/acp/testdata/sdk_client.mjs: the
// official ACP TypeScript SDK (@agentclientprotocol/sdk, installed by
// `make deps`) as the client, checking darman's messages against its
// schema (every message darman writes is checked against the SDK's zod
// schemas of protocol version 1), through the scenario of TestACPScenario.
func TestACPWithTheOfficialSDK(t *testing.T) {
	sdk, _ := filepath.Abs("../../.cache/npm/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js")
	if _, err := os.Stat(sdk); err != nil {
		t.Skip("the ACP SDK is not installed: run `make deps` (npm install --prefix .cache/npm @agentclientprotocol/sdk@2.4.0)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: run `make deps`")
	}
	script, _ := filepath.Abs("../../server/acp/testdata/sdk_client.mjs")
	e := newEnv(t)
	e.withModel(t, acpScript())
	cmd := exec.Command(node, script)
	cmd.Dir = e.workspace
	cmd.Env = append(e.vars, "ACP_SDK="+sdk, "DARMAN_BIN="+darmanBin, "WORKSPACE="+e.workspace)
	cmd.SysProcAttr = noTerminal()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * acpWait):
		cmd.Process.Kill()
		t.Fatalf("the SDK client did not finish\nstdout: %s\nstderr: %s", stdout.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("the SDK client failed: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var seen struct{ Permissions, Writes, Terminals, Updates, Checked int }
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &seen); err != nil || seen.Permissions != 1 || seen.Writes != 1 || seen.Terminals != 1 ||
		seen.Updates < 5 || seen.Checked < seen.Updates {
		t.Errorf("the SDK client saw %+v (%v)\nstdout: %s", seen, err, stdout.String())
	}
}

// BenchmarkACPStart measures what an ACP client waits for when it starts
// darman acp: process start to the initialize answer (p50, p99), and the
// RSS once idle after it and once the first session/new started the agent.
func BenchmarkACPStart(b *testing.B) {
	home := b.TempDir()
	workspace := filepath.Join(home, "project")
	os.MkdirAll(workspace, 0o755)
	model := llmtest.Start(b, llmtest.Script{})
	os.WriteFile(filepath.Join(workspace, "darman.json"), fmt.Appendf(nil,
		`{"model": "anthropic/claude-sonnet-4-5", "provider": {"anthropic": {"baseURL": %q, "apiKey": "sk-ant-test-0123456789"}}}`, model.URL), 0o644)
	vars := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config")}
	var times []time.Duration
	var idle, idleAnon, session, sessionAnon float64
	for b.Loop() {
		cmd := exec.Command(darmanBin, "acp")
		cmd.Dir = workspace
		cmd.Env = vars
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		conn := jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(stdio{stdout, stdin}, jsonrpc2.PlainObjectCodec{}),
			jsonrpc2.HandlerWithError(func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }))
		if err := conn.Call(context.Background(), "initialize", map[string]any{"protocolVersion": 1}, nil); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
		b.StopTimer()
		if idle == 0 {
			time.Sleep(100 * time.Millisecond) // idle: what the runtime does after the answer settles
			idle, idleAnon = residentMiB(b, cmd.Process.Pid)
			if err := conn.Call(context.Background(), "session/new", map[string]any{"cwd": workspace, "mcpServers": []any{}}, nil); err != nil {
				b.Fatal(err)
			}
			session, sessionAnon = residentMiB(b, cmd.Process.Pid)
		}
		stdin.Close()
		cmd.Wait()
		conn.Close()
		b.StartTimer()
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(times[min(len(times)*99/100, len(times)-1)])/1e6, "p99-ms")
	b.ReportMetric(idle, "MiB-rss-idle")
	b.ReportMetric(idleAnon, "MiB-anon-idle")
	b.ReportMetric(session, "MiB-rss-session")
	b.ReportMetric(sessionAnon, "MiB-anon-session")
}

// TestACPStopsOnSIGTERM: a client that stops darman acp with SIGTERM
// during a turn gets a clean exit, and the turn is stored as cancelled.
func TestACPStopsOnSIGTERM(t *testing.T) {
	e := newEnv(t)
	e.withModel(t, acpScript())
	c := startACP(t, e, func(method string, _ json.RawMessage) (any, error) { return nil, fmt.Errorf("unexpected %s", method) })
	c.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	id := c.newSession(e.workspace)
	go c.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": "stall until stopped"}}}, nil)
	c.await("the turn's first chunk", func(n acpNote) bool {
		return n.Method == "session/update" && strings.Contains(string(n.Params), "agent_message_chunk")
	})
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.exited:
		if err != nil {
			t.Fatalf("darman acp ended with %v after SIGTERM\nstderr: %s", err, c.stderr)
		}
	case <-time.After(acpWait):
		t.Fatal("darman acp did not end after SIGTERM")
	}
	c.exited <- nil
	show := e.ok("sessions", "show", id)
	if !strings.Contains(show, "stall until stopped") || !strings.Contains(show, "[cancelled]") {
		t.Errorf("the turn was not stored as cancelled:\n%s", show)
	}
}
