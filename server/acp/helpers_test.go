package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/server/acp"
	"github.com/darman-dev/darman/server/internal/fronttest"
	"github.com/darman-dev/darman/server/rpc/rpctest"
)

// wait bounds every wait in these tests; it only guards against a hang.
const wait = 20 * time.Second

const testModel = "anthropic/claude-sonnet-4-5"

// note is a message darman sent the client: a notification, or a request
// (ID set).
type note = rpctest.Message

// answerFunc answers darman's requests to the client.
type answerFunc = rpctest.Answer

// client is an ACP client for the tests: rpctest's, newline-delimited
// JSON over an in-memory pipe. It records every message from darman in
// order and answers darman's requests with answer, off its read loop.
type client struct{ *rpctest.Client }

// updates returns the session/update payloads of a kind, from index from.
func (c *client) updates(from int, kind string) []map[string]any {
	var out []map[string]any
	for _, n := range c.Since(from) {
		if n.Method != "session/update" {
			continue
		}
		var p struct {
			Update map[string]any `json:"update"`
		}
		json.Unmarshal(n.Params, &p)
		if p.Update["sessionUpdate"] == kind {
			out = append(out, p.Update)
		}
	}
	return out
}

// text is the agent's message text sent from index from.
func (c *client) text(from int) string {
	var b strings.Builder
	for _, u := range c.updates(from, "agent_message_chunk") {
		if content, ok := u["content"].(map[string]any); ok {
			b.WriteString(fmt.Sprint(content["text"]))
		}
	}
	return b.String()
}

// options describe a test's darman and client.
type options struct {
	script llmtest.Script
	// caps are the client's capabilities; nil means none.
	caps map[string]any
	// answer answers darman's requests; nil answers defaultAnswer.
	answer answerFunc
	// rules are the permission rules; nil means darman's defaults.
	rules []permission.Rule
	// bindMCP is Options.BindMCP.
	bindMCP func(ctx context.Context, root string, servers []acp.MCPServer) ([]tool.Tool, func() error, error)
	// files are written in the workspace before darman starts.
	files map[string]string
	// root and data reuse a workspace and a store directory (load).
	root, data string
	// failStarts is how many starts of the agent fail first, as with a
	// broken configuration.
	failStarts int
	// wrap, when set, wraps the client's end of the pipe (to record it).
	wrap func(net.Conn) net.Conn
	// initialized is acp.Options.Initialized.
	initialized func()
	// checkpoints takes snapshots before the turns' steps (a real
	// checkpoint.Keeper in the test's data directory), for /revert.
	checkpoints bool
	// images is acp.Options.Images.
	images func() bool
	// models change the catalog's entries (a text-only model).
	models map[string]llm.ModelOverride
	// timeouts give the named built-in tools a timeout of the test's in
	// place of their own.
	timeouts map[string]time.Duration
}

// testAgent is a directory's agent as the tests start it: the session
// service, with the test's model, and no named agents, trust notice or
// _meta.
type testAgent struct {
	svc         *session.Service
	st          *store.Store
	bash        tool.Tool
	checkpoints acp.Checkpoints
}

func (a *testAgent) Sessions() acp.Sessions                { return a.svc }
func (a *testAgent) Store() acp.Store                      { return a.st }
func (a *testAgent) Model(context.Context) (string, error) { return testModel, nil }
func (a *testAgent) Models(context.Context) []string {
	return []string{testModel, "anthropic/claude-haiku-4-5"}
}
func (a *testAgent) CheckModel(ref string) error {
	if !strings.HasPrefix(ref, "anthropic/") {
		return fmt.Errorf("no provider for %s", ref)
	}
	return nil
}
func (a *testAgent) Bash() tool.Tool              { return a.bash }
func (a *testAgent) Checkpoints() acp.Checkpoints { return a.checkpoints }
func (a *testAgent) Agents() *agents.Catalog      { return nil }
func (a *testAgent) Trust() acp.Trust             { return acp.Trust{} }
func (a *testAgent) Meta() map[string]any         { return nil }
func (a *testAgent) Close() error                 { return a.svc.Close() }

// env is a running darman with its client.
type env struct {
	t      testing.TB
	root   string
	data   string
	model  *llmtest.Server
	client *client
	served chan error
	stop   func()
	conn   net.Conn
}

// defaultAnswer answers everything with MethodNotFound, like a client
// that offers nothing.
func defaultAnswer(method string, _ json.RawMessage) (any, error) {
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "Unhandled method " + method}
}

func start(t testing.TB, o options) *env {
	t.Helper()
	e := &env{t: t, root: o.root, data: o.data, served: make(chan error, 1)}
	if e.root == "" {
		e.root, _ = filepath.EvalSymlinks(t.TempDir())
	}
	if e.data == "" {
		e.data = t.TempDir()
	}
	e.model = llmtest.Start(t, o.script)
	for rel, content := range o.files {
		e.write(rel, content)
	}
	core := fronttest.New(t, e.data, e.model.URL, o.models)
	srv, err := acp.New(acp.Options{
		Version:     "test",
		Images:      o.images,
		BindMCP:     o.bindMCP,
		Initialized: o.initialized,
		Start: func(ctx context.Context, setup acp.Setup) (acp.Agent, error) {
			if o.failStarts > 0 {
				o.failStarts--
				return nil, fmt.Errorf("darman.json: model: %q is not a provider/model-id", "nonsense")
			}
			a, err := core.Service(fronttest.Options{Root: setup.Root, Rules: o.rules, Timeouts: o.timeouts, Checkpoints: o.checkpoints},
				session.Options{Workspace: setup.Workspace, WorkspaceFor: setup.WorkspaceFor, AskerFor: setup.AskerFor})
			if err != nil {
				return nil, err
			}
			ag := &testAgent{svc: a.Service, st: core.Store}
			if a.Keeper != nil {
				ag.checkpoints = a.Keeper
			}
			for _, tl := range a.Tools {
				if tl.Info().Name == "bash" {
					ag.bash = tl
				}
			}
			return ag, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	serverEnd, clientEnd := net.Pipe()
	e.conn = clientEnd
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		err := srv.Serve(ctx, serverEnd, serverEnd)
		serverEnd.Close()
		core.Store.Close()
		e.served <- err
	}()
	answer := o.answer
	if answer == nil {
		answer = defaultAnswer
	}
	var stream net.Conn = clientEnd
	if o.wrap != nil {
		stream = o.wrap(clientEnd)
	}
	c := &client{rpctest.New(ctx, t, stream, rpctest.Options{Codec: rpctest.ACP, Answer: answer, Wait: wait})}
	e.client = c
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			c.Conn.Close()
			select {
			case <-e.served:
			case <-time.After(wait):
				t.Error("Serve did not return after the client hung up")
			}
			cancel()
		})
	}
	t.Cleanup(e.stop)
	caps := o.caps
	if caps == nil {
		caps = map[string]any{}
	}
	var res json.RawMessage
	c.MustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps,
		"clientInfo": map[string]string{"name": "test", "version": "1"}}, &res)
	return e
}

func (e *env) write(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// newSession opens a session in the workspace and returns its id.
func (e *env) newSession(mcpServers ...map[string]any) string {
	e.t.Helper()
	if mcpServers == nil {
		mcpServers = []map[string]any{}
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	e.client.MustCall("session/new", map[string]any{"cwd": e.root, "mcpServers": mcpServers}, &res)
	if res.SessionID == "" {
		e.t.Fatal("session/new answered without a sessionId")
	}
	return res.SessionID
}

// prompt runs a turn and returns its stop reason.
func (e *env) prompt(id, text string) string {
	e.t.Helper()
	var res struct {
		StopReason string `json:"stopReason"`
	}
	e.client.MustCall("session/prompt", map[string]any{"sessionId": id, "prompt": []map[string]any{{"type": "text", "text": text}}}, &res)
	return res.StopReason
}

func call(name, args string) llmtest.ToolCall {
	return llmtest.ToolCall{Name: name, Arguments: json.RawMessage(args)}
}

// allowOnce answers every permission question with allow_once.
func allowOnce(params json.RawMessage) any {
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}
}
