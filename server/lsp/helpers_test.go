package lsp_test

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/server/internal/fronttest"
	"github.com/darman-dev/darman/server/lsp"
	"github.com/darman-dev/darman/server/rpc/rpctest"
)

// wait bounds every wait in these tests; it only guards against a hang.
const wait = 20 * time.Second

// note is a message the server sent to the client: a notification, or a
// request (ID set).
type note = rpctest.Message

// answerFunc answers the server's requests to the client: result, or an
// error (a *jsonrpc2.Error for a JSON-RPC error reply).
type answerFunc = rpctest.Answer

// client is a language client for the tests: rpctest's, with the VS Code
// codec (not darman's framing) over an in-memory pipe. It records every
// message from the server in the order it came, and answers the server's
// requests with answer.
type client struct {
	*rpctest.Client
	t testing.TB
}

// newClient is a client on the test's end of the pipe.
func newClient(ctx context.Context, t testing.TB, stream net.Conn, answer answerFunc) *client {
	return &client{rpctest.New(ctx, t, stream, rpctest.Options{Codec: rpctest.LSP, Answer: answer, Wait: wait, Peer: "the server", Log: true}), t}
}

// command runs workspace/executeCommand with one argument object.
func (c *client) command(name string, arg any, result any) error {
	params := map[string]any{"command": name}
	if arg != nil {
		params["arguments"] = []any{arg}
	}
	return c.Call("workspace/executeCommand", params, result)
}

func (c *client) mustCommand(name string, arg any, result any) {
	c.t.Helper()
	if err := c.command(name, arg, result); err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
}

// options describe a test's server and client.
type options struct {
	script llmtest.Script
	// caps are the client's capabilities; nil means none.
	caps map[string]any
	// optIns go in capabilities.experimental.darman.
	optIns map[string]bool
	// answer answers the server's requests; nil answers defaultAnswer.
	answer answerFunc
	// rules are the permission rules; nil means darman's defaults.
	rules []permission.Rule
	// serverOpts are the Options fields other than Start and Logger.
	serverOpts lsp.Options
	// model, when set, replaces the Agent's Model func.
	model func(context.Context) (string, error)
	// noInitialize leaves the handshake to the test.
	noInitialize bool
	// promptActions are the Agent's code actions, as from a config file.
	promptActions []lsp.PromptAction
	// files are written in the workspace (path relative to it → content)
	// before the server starts.
	files map[string]string
	// record keeps the frames on the wire for a transcript (env.wire).
	record bool
	// clientInfo is initialize's clientInfo.name; "" sends none.
	clientInfo string
	// settings are initializationOptions.darman; nil sends none.
	settings map[string]any
	// startGate, when set, holds the agent's start until it is closed.
	startGate chan struct{}
	// seenSetup, when set, is given the Setup when the agent starts.
	seenSetup func(lsp.Setup)
	// deleted is the Agent's Deleted.
	deleted func(agent.ID) error
	// checkpoints takes snapshots before the turns' steps (a real
	// checkpoint.Keeper in the test's data directory), for revert.
	checkpoints bool
	// timeouts give the named built-in tools a timeout of the test's in
	// place of their own.
	timeouts map[string]time.Duration
}

// env is a running server with its client.
type env struct {
	t      testing.TB
	root   string
	data   string
	model  *llmtest.Server
	store  *store.Store
	client *client
	exit   chan int
	conn   net.Conn
	wire   *wire // with options.record
}

// defaultAnswer accepts progress tokens and answers everything else with
// MethodNotFound, like a client that implements nothing optional.
func defaultAnswer(method string, _ json.RawMessage) (any, error) {
	if method == "window/workDoneProgress/create" {
		return nil, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "Unhandled method " + method}
}

const testModel = "anthropic/claude-sonnet-4-5"

func start(t testing.TB, o options) *env {
	t.Helper()
	e := &env{t: t, root: t.TempDir(), data: t.TempDir(), exit: make(chan int, 1)}
	e.root, _ = filepath.EvalSymlinks(e.root)
	e.model = llmtest.Start(t, o.script)
	for rel, content := range o.files {
		e.write(rel, content)
	}
	core := fronttest.New(t, e.data, e.model.URL, nil)
	e.store = core.Store
	model := o.model
	if model == nil {
		model = func(context.Context) (string, error) { return testModel, nil }
	}
	opts := o.serverOpts
	opts.DataDir = e.data
	opts.Version = "test"
	opts.Start = func(ctx context.Context, setup lsp.Setup) (*lsp.Agent, error) {
		if o.seenSetup != nil {
			o.seenSetup(setup)
		}
		if o.startGate != nil {
			select {
			case <-o.startGate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		a, err := core.Service(fronttest.Options{Root: setup.Root, Rules: o.rules, Timeouts: o.timeouts, Checkpoints: o.checkpoints},
			session.Options{Workspace: setup.Workspace, Asker: setup.Asker, Agents: setup.Agents})
		if err != nil {
			return nil, err
		}
		ag := &lsp.Agent{Sessions: a.Service, Store: core.Store, Runtime: testRuntime{model: model, close: a.Service.Close, deleted: o.deleted},
			PromptActions: o.promptActions}
		if a.Keeper != nil {
			ag.Checkpoints = a.Keeper
		}
		return ag, nil
	}
	// The workspace's agent files, as darman lsp finds them.
	opts.Agents = func(_ context.Context, setup lsp.Setup) *agents.Catalog {
		return agents.Load(agents.Options{Dirs: prompt.LocateDirs(setup.Root, func(string) (string, bool) { return "", false })})
	}
	srv, err := lsp.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	serverEnd, clientEnd := net.Pipe()
	e.conn = clientEnd
	if o.record {
		e.wire = newWire(clientEnd)
		clientEnd = e.wire
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { e.exit <- srv.Serve(ctx, serverEnd) }()

	answer := o.answer
	if answer == nil {
		answer = defaultAnswer
	}
	c := newClient(ctx, t, clientEnd, answer)
	e.client = c
	t.Cleanup(func() {
		cancel()
		c.Conn.Close()
		select {
		case <-e.exit:
		case <-time.After(wait):
			t.Error("Serve did not return")
		}
	})
	if !o.noInitialize {
		caps := o.caps
		if caps == nil {
			caps = map[string]any{}
		}
		if o.optIns != nil {
			caps["experimental"] = map[string]any{"darman": o.optIns}
		}
		var res json.RawMessage
		params := map[string]any{
			"processId":        os.Getpid(),
			"rootUri":          fileURI(e.root),
			"capabilities":     caps,
			"workspaceFolders": []map[string]string{{"uri": fileURI(e.root), "name": "root"}},
		}
		if o.settings != nil {
			params["initializationOptions"] = map[string]any{"darman": o.settings}
		}
		if o.clientInfo != "" {
			params["clientInfo"] = map[string]string{"name": o.clientInfo, "version": "1"}
		}
		c.MustCall("initialize", params, &res)
		c.Notify("initialized", map[string]any{})
	}
	return e
}

// shutdown sends shutdown and exit and returns Serve's exit status.
func (e *env) shutdown() int {
	e.t.Helper()
	e.client.MustCall("shutdown", nil, nil)
	e.client.Notify("exit", nil)
	select {
	case code := <-e.exit:
		e.exit <- code
		return code
	case <-time.After(wait):
		e.t.Fatal("Serve did not return after exit")
	}
	return -1
}

// update is a darman/sessionUpdate as the client reads it.
type update struct {
	SessionID string         `json:"sessionId"`
	TurnID    string         `json:"turnId"`
	Update    map[string]any `json:"update"`
}

// testRuntime is a test's workspace runtime (lsp.Runtime): the model, the
// session service's Close, and what a deleted session also removes (nil:
// nothing); it reports no status and finds no definitions.
type testRuntime struct {
	model   func(context.Context) (string, error)
	close   func() error
	deleted func(agent.ID) error
}

func (r testRuntime) Model(ctx context.Context) (string, error) { return r.model(ctx) }
func (r testRuntime) Status(context.Context) map[string]any     { return nil }
func (r testRuntime) Definitions() complete.Definer             { return nil }
func (r testRuntime) Close() error                              { return r.close() }

func (r testRuntime) Deleted(id agent.ID) error {
	if r.deleted == nil {
		return nil
	}
	return r.deleted(id)
}

// fixedModel is a runtime's model that is always ref.
func fixedModel(ref string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return ref, nil }
}

// updateOf decodes a darman/sessionUpdate.
func updateOf(t testing.TB, n note) update {
	t.Helper()
	var u update
	if err := json.Unmarshal(n.Params, &u); err != nil {
		t.Fatalf("a sessionUpdate that does not decode: %s", n.Params)
	}
	return u
}

// isState matches the state_update with state.
func isState(state string) func(note) bool {
	return func(n note) bool {
		if n.Method != "darman/sessionUpdate" {
			return false
		}
		var u update
		json.Unmarshal(n.Params, &u)
		return u.Update["sessionUpdate"] == "state_update" && u.Update["state"] == state
	}
}

func isMethod(method string) func(note) bool {
	return func(n note) bool { return n.Method == method }
}

// turn is darman.prompt's result.
type turn struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
}

func (e *env) prompt(text string) turn {
	e.t.Helper()
	var tr turn
	e.client.mustCommand("darman.prompt", map[string]any{"prompt": text}, &tr)
	if tr.SessionID == "" || tr.TurnID == "" {
		e.t.Fatalf("darman.prompt answered %+v", tr)
	}
	return tr
}

func (e *env) write(rel, content string) string {
	e.t.Helper()
	path := filepath.Join(e.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *env) uri(rel string) string { return fileURI(filepath.Join(e.root, rel)) }

// fileURI is a path as a file: URI, percent-encoded as editors send it.
func fileURI(path string) string { return (&url.URL{Scheme: "file", Path: path}).String() }

// open sends didOpen with text.
func (e *env) open(rel, text string) {
	e.client.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": e.uri(rel), "languageId": "go", "version": 1, "text": text}})
}

// toolStep is a scripted answer that calls one tool.
func toolStep(name string, args any) llmtest.Step {
	b, _ := json.Marshal(args)
	return llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: b}}}
}

// toolResult is the text the model was sent back for the k-th call of
// the conversation: the result of the tool it called in step k-1.
func (e *env) toolResult(k int) string {
	e.t.Helper()
	calls := e.model.ModelCalls()
	if len(calls) <= k {
		e.t.Fatalf("the model was called %d times, want more than %d", len(calls), k)
	}
	msgs := calls[k].Get("messages").Array()
	last := msgs[len(msgs)-1]
	return last.Get("content.0.content").String() + last.Get("content.0.content.0.text").String()
}
