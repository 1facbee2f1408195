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
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/tidwall/gjson"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/store"
)

// The parity scenario, the same for every front: a turn with text, a
// read, an edit that needs permission and a patch over two files; a
// command whose template inlines @notes.txt (an unsaved buffer where the
// front has buffers); a turn cancelled mid-answer; a turn whose process
// is killed mid-answer; and the session resumed with that interrupted
// answer in it.
const (
	parityTidy    = "tidy the notes"
	parityCancel  = "take your time"
	parityKilled  = "think it over"
	parityResume  = "go on"
	parityBuffer  = "unsaved buffer of the notes\n"
	parityCommand = "Look at these:\n@notes.txt\n"
)

var parityPatch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Update File: b.txt\n@@\n-beta\n+BETA\n*** End Patch"

// parityScript answers by the turn's user message and the number of
// answers since it, so every front's session gets the same answers
// whatever came before.
func parityScript() llmtest.Script {
	// One text delta (message_start, ping, content_block_start, the
	// delta), then nothing: what is stored of a cancelled or killed answer
	// is the same whenever the front stops it.
	stall := []llmtest.Fault{{Kind: llmtest.FaultStall, After: 4, Times: -1}}
	patch, _ := json.Marshal(map[string]string{"input": parityPatch})
	return llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		msgs := c.Get("messages").Array()
		user, k := "", 0
		for i := len(msgs) - 1; i >= 0; i-- {
			m := msgs[i]
			if m.Get("role").String() == "assistant" {
				k++
				continue
			}
			if t := m.Get(`content.#(type=="text").text`); t.Exists() {
				user = t.String()
				break
			}
		}
		switch {
		case strings.HasPrefix(user, parityTidy):
			return []llmtest.Step{
				{Text: "Reading the notes.", ToolCalls: []llmtest.ToolCall{{ID: "call_read", Name: "read", Arguments: json.RawMessage(`{"path":"notes.txt"}`)}}},
				{ToolCalls: []llmtest.ToolCall{{ID: "call_edit", Name: "edit", Arguments: json.RawMessage(`{"path":"notes.txt","oldString":"draft","newString":"final"}`)}}},
				{ToolCalls: []llmtest.ToolCall{{ID: "call_patch", Name: "apply_patch", Arguments: patch}}},
				{Text: "Tidied the notes and both files."},
			}[min(k, 3)]
		case strings.HasPrefix(user, "Look at these:"):
			return llmtest.Step{Text: "I have seen the notes."}
		case user == parityCancel, user == parityKilled:
			return llmtest.Step{Text: "let me think about it for a long while", Chunks: 1, Faults: stall}
		case user == parityResume:
			return llmtest.Step{Text: "Going on."}
		}
		return llmtest.Step{Text: "unexpected prompt: " + user}
	}}
}

// parityEnv is one front's machine: its own home, store and model.
func parityEnv(t *testing.T) (*env, *llmtest.Server) {
	e := newEnv(t)
	srv := e.withModel(t, parityScript())
	e.write("notes.txt", "the draft notes\n")
	e.write("a.txt", "alpha\n")
	e.write("b.txt", "beta\n")
	e.write(".darman/command/look.md", "---\ndescription: Look at the notes\n---\n"+parityCommand)
	return e, srv
}

// seen is what a front's user saw of one turn: the answer's text and the
// tool calls as they ended (call id and status), in order.
type seen struct {
	Text  string
	Tools []string
}

// TestFrontsAgree runs the parity scenario through darman run (a
// process, --format json), darman lsp (a process, the LSP client of these
// tests with session updates and permission requests opted in) and darman
// acp (a process, a JSON-RPC client over its pipes that reads files for
// darman as an editor does), then checks that the three stored sessions
// are the same, message for message and part for part, and that what
// each user saw of each turn (the answer's text, the tool calls and how
// they ended) is the same; that the permission questions of the editor
// fronts carried every diff of the patch; that @notes.txt was the editor's
// unsaved buffer in both editor fronts (and the disk for darman run, which
// has no buffers); and that each front replays the interrupted answer as
// interrupted when the session is resumed.
func TestFrontsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("three fronts as processes")
	}
	paritySDK(t)
	type front struct {
		name   string
		stored []string
		turns  []seen
	}
	var fronts []front
	for _, f := range []struct {
		name string
		run  func(t *testing.T) (agent.ID, *env, []seen)
	}{{"run", parityRun}, {"lsp", parityLSP}, {"acp", parityACP}} {
		id, e, turns := f.run(t)
		if t.Failed() {
			t.FailNow()
		}
		fronts = append(fronts, front{f.name, parityStored(t, e, id), turns})
	}
	t.Logf("stored:\n  %s\nseen: %+v", strings.Join(fronts[0].stored, "\n  "), fronts[0].turns)
	for _, f := range fronts[1:] {
		if !reflect.DeepEqual(f.stored, fronts[0].stored) {
			t.Errorf("darman %s stored\n  %s\ndarman %s stored\n  %s", fronts[0].name, strings.Join(fronts[0].stored, "\n  "), f.name, strings.Join(f.stored, "\n  "))
		}
		if !reflect.DeepEqual(f.turns, fronts[0].turns) {
			t.Errorf("darman %s's user saw %+v\ndarman %s's user saw %+v", fronts[0].name, fronts[0].turns, f.name, f.turns)
		}
	}
}

// parityStored is a stored session as the fronts must agree on it: every
// message's role and how it ended, every part's kind and what it holds,
// with the @notes.txt the command inlined written as <notes>.
func parityStored(t *testing.T, e *env, id agent.ID) []string {
	var ex store.Export
	if err := json.Unmarshal([]byte(e.ok("sessions", "export", string(id))), &ex); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ex.Messages {
		head := fmt.Sprintf("%s finish=%q interrupted=%v:", m.Message.Role, m.Message.Finish, m.Message.Interrupted())
		for _, p := range m.Parts {
			switch p.Kind {
			case agent.PartText:
				text := p.Text
				for _, notes := range []string{parityBuffer, "the final notes\n"} {
					text = strings.Replace(text, notes, "<notes>\n", 1)
				}
				head += fmt.Sprintf(" text(%q)", text)
			case agent.PartTool:
				head += fmt.Sprintf(" tool(%s %s %s)", p.Tool.CallID, p.Tool.Name, p.Tool.Status)
			default:
				head += " " + string(p.Kind)
			}
		}
		out = append(out, head)
	}
	return out
}

// parityRun is the scenario through darman run.
func parityRun(t *testing.T) (agent.ID, *env, []seen) {
	e, srv := parityEnv(t)
	var turns []seen
	out := e.ok("run", "--format", "json", "--allow", "edit", parityTidy)
	res, s := runSeen(t, out)
	turns = append(turns, s)
	id := res.SessionID
	if res.StopReason != agent.FinishStop || res.Result != "Tidied the notes and both files." || res.Usage.Input == 0 || res.DurationMS < 0 {
		t.Errorf("the result line: %+v", res)
	}
	_, s = runSeen(t, e.ok("run", "--format", "json", "-s", string(id), "/look"))
	turns = append(turns, s)
	// darman run has no buffers: @notes.txt is the disk's.
	calls := srv.ModelCalls()
	if got := calls[len(calls)-1].Get("messages.@reverse.0.content.0.text").String(); got != "Look at these:\nnotes.txt:\n```\nthe final notes\n```\n" {
		t.Errorf("/look sent %q", got)
	}

	// Cancelled with ^C once the answer is streaming.
	cmd, stdout := startRunJSON(t, e, "--format", "json", "-s", string(id), parityCancel)
	waitLine(t, stdout, `"agent_message_chunk"`)
	cmd.Process.Signal(os.Interrupt)
	rest, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); exitOf(err) != 130 {
		t.Errorf("darman run after ^C: %v", err)
	}
	if r := gjson.Get(lastLine(string(rest)), "stopReason").String(); r != "cancelled" {
		t.Errorf("the cancelled turn's result: %s", lastLine(string(rest)))
	}
	// What a cancelled turn showed depends on when it was stopped: only
	// the stored sessions are compared for it.
	turns = append(turns, seen{})

	// Killed mid-answer, then resumed.
	cmd, stdout = startRunJSON(t, e, "--format", "json", "-s", string(id), parityKilled)
	waitLine(t, stdout, `"agent_message_chunk"`)
	cmd.Process.Kill()
	cmd.Wait()
	if show := e.ok("sessions", "show", string(id)); !strings.Contains(show, "[interrupted") {
		t.Errorf("sessions show does not mark the interrupted answer:\n%s", show)
	}
	_, s = runSeen(t, e.ok("run", "--format", "json", "-s", string(id), parityResume))
	turns = append(turns, s)
	return id, e, turns
}

// runSeen reads darman run's JSON lines: what the user saw of the turn,
// and the result line, which must come last.
func runSeen(t *testing.T, out string) (resultLine, seen) {
	t.Helper()
	var s seen
	var res resultLine
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, line := range lines {
		if gjson.Get(line, "type").String() == "result" {
			if i != len(lines)-1 {
				t.Errorf("the result line is not the last: %s", out)
			}
			json.Unmarshal([]byte(line), &res)
			continue
		}
		var l struct{ Event agent.Event }
		json.Unmarshal([]byte(line), &l)
		s.add(l.Event)
	}
	if res.Type != "result" {
		t.Errorf("no result line in:\n%s", out)
	}
	return res, s
}

type resultLine struct {
	Type       string
	SessionID  agent.ID
	Result     string
	StopReason agent.Finish
	Usage      agent.Usage
	CostUSD    float64
	DurationMS int64
}

// add takes in an agent event as the user sees it.
func (s *seen) add(e agent.Event) {
	if e.ParentCallID != "" {
		return
	}
	switch e.Kind {
	case agent.EventMessageChunk:
		s.Text += e.Text
	case agent.EventToolCallUpdate:
		if e.Tool.Status == agent.ToolCompleted || e.Tool.Status == agent.ToolFailed {
			s.Tools = append(s.Tools, e.Tool.CallID+" "+string(e.Tool.Status))
		}
	}
}

// addUpdate takes in an ACP-shaped update (darman/sessionUpdate's and
// session/update's) as the user sees it.
func (s *seen) addUpdate(u gjson.Result) {
	switch u.Get("sessionUpdate").String() {
	case "agent_message_chunk":
		s.Text += u.Get("content.text").String()
	case "tool_call_update":
		if st := u.Get("status").String(); st == "completed" || st == "failed" {
			s.Tools = append(s.Tools, u.Get("toolCallId").String()+" "+st)
		}
	}
}

func startRunJSON(t *testing.T, e *env, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(darmanBin, append([]string{"run"}, args...)...)
	cmd.Dir = e.workspace
	cmd.Env = e.vars
	cmd.SysProcAttr = noTerminal()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, bufio.NewReader(out)
}

// waitLine reads until a line holding want.
func waitLine(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if strings.Contains(line, want) {
			return
		}
		if err != nil {
			t.Fatalf("no line with %q: %v", want, err)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func exitOf(err error) int {
	if x, ok := err.(*exec.ExitError); ok {
		return x.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// rpcPeer is an editor's end of a JSON-RPC connection to a darman
// process: it records what darman sends and answers its requests.
type rpcPeer struct {
	t      *testing.T
	answer func(method string, params json.RawMessage) (any, error)

	mu    sync.Mutex
	notes []jsonrpc2.Request
	more  chan struct{}
	conn  *jsonrpc2.Conn
	cmd   *exec.Cmd
}

func (p *rpcPeer) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	p.mu.Lock()
	p.notes = append(p.notes, *req)
	close(p.more)
	p.more = make(chan struct{})
	p.mu.Unlock()
	if req.Notif {
		return
	}
	go func() {
		var params json.RawMessage
		if req.Params != nil {
			params = *req.Params
		}
		res, err := p.answer(req.Method, params)
		if err != nil {
			conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: err.Error()})
			return
		}
		conn.Reply(ctx, req.ID, res)
	}()
}

// startPeer starts darman with args and connects a peer to its pipes.
func startPeer(t *testing.T, e *env, codec jsonrpc2.ObjectCodec, answer func(string, json.RawMessage) (any, error), args ...string) *rpcPeer {
	t.Helper()
	cmd := exec.Command(darmanBin, args...)
	cmd.Dir = e.workspace
	cmd.Env = e.vars
	cmd.SysProcAttr = noTerminal()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &rpcPeer{t: t, answer: answer, more: make(chan struct{}), cmd: cmd}
	p.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(pipes{stdin, stdout}, codec), p)
	t.Cleanup(func() {
		p.conn.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return p
}

// kill ends the process at once, as a crash does.
func (p *rpcPeer) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	p.conn.Close()
}

func (p *rpcPeer) call(method string, params, result any) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.conn.Call(ctx, method, params, result); err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
}

// await returns the index of the first message from index from that
// match accepts.
func (p *rpcPeer) await(from int, what string, match func(jsonrpc2.Request) bool) int {
	p.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		p.mu.Lock()
		for i := from; i < len(p.notes); i++ {
			if match(p.notes[i]) {
				p.mu.Unlock()
				return i
			}
		}
		more := p.more
		p.mu.Unlock()
		select {
		case <-more:
		case <-deadline:
			p.t.Fatalf("no %s from darman", what)
		}
	}
}

func (p *rpcPeer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.notes)
}

// since returns the messages of method from index from on.
func (p *rpcPeer) since(from int, method string) []jsonrpc2.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []jsonrpc2.Request
	for _, n := range p.notes[from:] {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

func params(r jsonrpc2.Request) string {
	if r.Params == nil {
		return ""
	}
	return string(*r.Params)
}

// diffsAsked are the diffs of each permission question, by question.
func diffsAsked(reqs []jsonrpc2.Request) []int {
	var out []int
	for _, r := range reqs {
		out = append(out, len(gjson.Get(params(r), `toolCall.content.#(type=="diff")#`).Array()))
	}
	return out
}

// parityLSP is the scenario through darman lsp.
func parityLSP(t *testing.T) (agent.ID, *env, []seen) {
	e, srv := parityEnv(t)
	answer := func(method string, _ json.RawMessage) (any, error) {
		if method == "darman/requestPermission" {
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
		}
		return nil, nil
	}
	start := func() *rpcPeer {
		p := startPeer(t, e, jsonrpc2.VSCodeObjectCodec{}, answer, "lsp")
		p.call("initialize", map[string]any{"processId": nil,
			"capabilities":     map[string]any{"experimental": map[string]any{"darman": map[string]bool{"sessionUpdates": true, "requestPermission": true}}},
			"workspaceFolders": []map[string]string{{"uri": "file://" + e.workspace, "name": "project"}}}, nil)
		p.conn.Notify(context.Background(), "initialized", map[string]any{})
		return p
	}
	p := start()
	var turns []seen
	turn := func(command string, args map[string]any) (agent.ID, string, seen) {
		from := p.count()
		var tr struct{ SessionID, TurnID string }
		p.call("workspace/executeCommand", map[string]any{"command": command, "arguments": []any{args}}, &tr)
		end := p.await(from, "the turn's end", func(n jsonrpc2.Request) bool {
			return n.Method == "darman/sessionUpdate" && gjson.Get(params(n), "turnId").String() == tr.TurnID &&
				gjson.Get(params(n), "update.sessionUpdate").String() == "state_update" &&
				strings.Contains("idle cancelled failed", gjson.Get(params(n), "update.state").String())
		})
		return agent.ID(tr.SessionID), tr.TurnID, lspSeen(p, from, end, tr.TurnID)
	}
	from := p.count()
	id, _, s := turn("darman.prompt", map[string]any{"prompt": parityTidy})
	turns = append(turns, s)
	if got := diffsAsked(p.since(from, "darman/requestPermission")); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("the LSP permission questions carried %v diffs; want 1 for the edit and 2 for the patch", got)
	}
	// The editor holds notes.txt with unsaved changes.
	p.conn.Notify(context.Background(), "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": "file://" + filepath.Join(e.workspace, "notes.txt"), "languageId": "plaintext", "version": 1, "text": parityBuffer}})
	_, _, s = turn("darman.command.run", map[string]any{"name": "look", "sessionId": string(id)})
	turns = append(turns, s)
	sentBuffer(t, srv)

	from = p.count()
	var tr struct{ SessionID, TurnID string }
	p.call("workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"sessionId": string(id), "prompt": parityCancel}}}, &tr)
	p.await(from, "the answer streaming", func(n jsonrpc2.Request) bool {
		return strings.Contains(params(n), `"agent_message_chunk"`)
	})
	p.call("workspace/executeCommand", map[string]any{"command": "darman.cancel", "arguments": []any{map[string]any{"sessionId": string(id)}}}, nil)
	p.await(from, "the turn cancelled", func(n jsonrpc2.Request) bool { return strings.Contains(params(n), `"state":"cancelled"`) })
	turns = append(turns, seen{})

	from = p.count()
	p.call("workspace/executeCommand", map[string]any{"command": "darman.prompt", "arguments": []any{map[string]any{"sessionId": string(id), "prompt": parityKilled}}}, &tr)
	p.await(from, "the answer streaming", func(n jsonrpc2.Request) bool {
		return strings.Contains(params(n), `"agent_message_chunk"`)
	})
	p.kill()
	p = start()
	var loaded struct{ Updates []map[string]any }
	p.call("workspace/executeCommand", map[string]any{"command": "darman.session.load", "arguments": []any{map[string]any{"sessionId": string(id)}}}, &loaded)
	if !strings.Contains(fmt.Sprint(loaded.Updates), "this answer was interrupted before it finished") {
		t.Errorf("darman.session.load does not mark the interrupted answer: %v", loaded.Updates)
	}
	_, _, s = turn("darman.prompt", map[string]any{"sessionId": string(id), "prompt": parityResume})
	turns = append(turns, s)
	return id, e, turns
}

// lspSeen is what the LSP client's user saw of turn turnID.
func lspSeen(p *rpcPeer, from, end int, turnID string) seen {
	var s seen
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.notes[from : end+1] {
		if n.Method != "darman/sessionUpdate" || gjson.Get(params(n), "turnId").String() != turnID {
			continue
		}
		s.addUpdate(gjson.Get(params(n), "update"))
	}
	return s
}

// parityACP is the scenario through darman acp, with the official ACP
// SDK's client (testdata/parity_acp.mjs) as the editor: one run of the
// script up to the answer during which the test kills darman (kill -9),
// and one that loads the session in a new darman acp and resumes it.
func parityACP(t *testing.T) (agent.ID, *env, []seen) {
	e, srv := parityEnv(t)
	steps := map[string]*seen{}
	var (
		id       agent.ID
		diffs    []int
		stops    = map[string]string{}
		killed   bool
		sentLook bool
	)
	take := func(line gjson.Result) {
		s := steps[line.Get("step").String()]
		if s == nil {
			s = &seen{}
			steps[line.Get("step").String()] = s
		}
		switch line.Get("kind").String() {
		case "session":
			id = agent.ID(line.Get("sessionId").String())
		case "update":
			s.addUpdate(line.Get("update"))
		case "permission":
			if line.Get("step").String() == "tidy" {
				diffs = append(diffs, int(line.Get("diffs").Int()))
			}
		case "result":
			stops[line.Get("step").String()] = line.Get("stopReason").String()
			if line.Get("step").String() == "look" {
				sentBuffer(t, srv)
				sentLook = true
			}
		case "streaming":
			// Killed mid-answer, as a crash does.
			if err := killPID(int(line.Get("pid").Int())); err != nil {
				t.Errorf("killing darman acp: %v", err)
			}
			killed = true
		case "exited":
			if sig := line.Get("signal").String(); sig != "SIGKILL" {
				t.Errorf("darman acp ended by %q, not by the kill", sig)
			}
		}
	}
	parityNode(t, e, take)
	if id == "" || !killed || !sentLook {
		t.Fatalf("the SDK client's first run ended early: session %q, killed %v, /look answered %v", id, killed, sentLook)
	}
	parityNode(t, e, take, "SESSION_ID="+string(id))
	if !reflect.DeepEqual(diffs, []int{1, 2}) {
		t.Errorf("the ACP permission questions carried %v diffs; want 1 for the edit and 2 for the patch", diffs)
	}
	if r := stops["cancel"]; r != "cancelled" {
		t.Errorf("the cancelled prompt's stop reason: %q", r)
	}
	if replay := steps["load"]; replay == nil || !strings.Contains(replay.Text, "[this answer was interrupted before it finished]") {
		t.Errorf("session/load does not mark the interrupted answer: %+v", replay)
	}
	var turns []seen
	for _, step := range []string{"tidy", "look", "", "resume"} {
		switch {
		case step == "":
			turns = append(turns, seen{})
		case steps[step] == nil:
			t.Errorf("the SDK client saw nothing of the %s turn", step)
			turns = append(turns, seen{})
		default:
			turns = append(turns, *steps[step])
		}
	}
	return id, e, turns
}

// parityNode runs testdata/parity_acp.mjs with the scenario and vars,
// handing take every line it prints as it prints it.
func parityNode(t *testing.T, e *env, take func(gjson.Result), vars ...string) {
	t.Helper()
	sdk, node := paritySDK(t)
	script, _ := filepath.Abs("testdata/parity_acp.mjs")
	cmd := exec.Command(node, script)
	cmd.Dir = e.workspace
	cmd.Env = append(append(e.vars, "ACP_SDK="+sdk, "DARMAN_BIN="+darmanBin, "WORKSPACE="+e.workspace,
		"TIDY="+parityTidy, "CANCEL="+parityCancel, "KILLED="+parityKilled, "RESUME="+parityResume, "BUFFER="+parityBuffer), vars...)
	cmd.SysProcAttr = noTerminal()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(4*acpWait, func() { cmd.Process.Kill() })
	defer timer.Stop()
	var out strings.Builder
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<24)
	for lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		take(gjson.Parse(lines.Text()))
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the SDK client failed: %v\nstdout: %s\nstderr: %s", err, out.String(), stderr.String())
	}
}

// paritySDK finds the official ACP SDK and node, which make deps
// installs.
func paritySDK(t *testing.T) (sdk, node string) {
	t.Helper()
	sdk, _ = filepath.Abs("../../.cache/npm/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js")
	if _, err := os.Stat(sdk); err != nil {
		t.Skip("the ACP SDK is not installed: run `make deps` (npm install --prefix .cache/npm @agentclientprotocol/sdk@2.4.0)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: run `make deps`")
	}
	return sdk, node
}

// sentBuffer checks that the last model call of the /look command had
// the editor's unsaved buffer of notes.txt, not the disk's.
func sentBuffer(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	calls := srv.ModelCalls()
	for i := len(calls) - 1; i >= 0; i-- {
		got := calls[i].Get("messages.@reverse.0.content.0.text").String()
		if !strings.HasPrefix(got, "Look at these:") {
			continue
		}
		if got != "Look at these:\nnotes.txt:\n```\n"+parityBuffer+"```\n" {
			t.Errorf("/look did not inline the editor's buffer: %q", got)
		}
		return
	}
	t.Errorf("no model call of the /look command")
}
