package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/server/lsp"
)

// gateEnv starts a server whose agent only hands out the MCP gate made
// from its Setup's asker, with a client that answers with answer.
// elicit is the editor's elicitor.
type elicit func(context.Context, permission.Elicitation) (permission.ElicitAnswer, error)

func (f elicit) Elicit(ctx context.Context, e permission.Elicitation) (permission.ElicitAnswer, error) {
	return f(ctx, e)
}

func gateEnv(t *testing.T, answer answerFunc) (elicit, *client) {
	t.Helper()
	return gateEnvWith(t, answer, nil)
}

// gateEnvWith is gateEnv that also hands the Setup to seen.
func gateEnvWith(t *testing.T, answer answerFunc, seen func(lsp.Setup)) (elicit, *client) {
	t.Helper()
	return gateEnvCaps(t, answer, seen, map[string]any{}, wait)
}

// gateEnvCaps is gateEnvWith for a client with these
// capabilities.experimental.darman opt-ins, and a server that waits for
// the user's answers for timeout.
func gateEnvCaps(t *testing.T, answer answerFunc, seen func(lsp.Setup), optIns map[string]any, timeout time.Duration) (elicit, *client) {
	t.Helper()
	root := t.TempDir()
	st, err := store.Open(context.Background(), t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	gates := make(chan elicit, 1)
	srv, err := lsp.New(lsp.Options{DataDir: t.TempDir(), Version: "test", PermissionTimeout: timeout,
		Start: func(ctx context.Context, setup lsp.Setup) (*lsp.Agent, error) {
			if seen != nil {
				seen(setup)
			}
			gates <- setup.Elicitor.Elicit
			svc, err := session.New(session.Options{Store: st, Workspace: setup.Workspace, Asker: setup.Asker,
				Models: func(string) (llm.Provider, string, error) { return nil, "", errors.New("no model") }})
			if err != nil {
				return nil, err
			}
			return &lsp.Agent{Sessions: svc, Store: st, Runtime: testRuntime{model: fixedModel(testModel), close: svc.Close}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	serverEnd, clientEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	go func() { exit <- srv.Serve(ctx, serverEnd) }()
	c := newClient(ctx, t, clientEnd, answer)
	t.Cleanup(func() {
		cancel()
		c.Conn.Close()
		select {
		case <-exit:
		case <-time.After(wait):
			t.Error("Serve did not return")
		}
	})
	var res json.RawMessage
	c.MustCall("initialize", map[string]any{"processId": os.Getpid(), "rootUri": fileURI(root),
		"capabilities": map[string]any{"window": map[string]any{"showDocument": map[string]any{"support": true}},
			"experimental": map[string]any{"darman": optIns}}}, &res)
	c.Notify("initialized", map[string]any{})
	select {
	case g := <-gates:
		if g == nil {
			t.Fatal("Elicitor returned nil for the server's own asker")
		}
		return g, c
	case <-time.After(wait):
		t.Fatal("the agent did not start")
	}
	return nil, nil
}

// answerButtons answers each showMessageRequest with the next title of
// picks and records window/showDocument's params.
func answerButtons(picks ...string) (answerFunc, chan string) {
	opened := make(chan string, 4)
	return func(method string, params json.RawMessage) (any, error) {
		switch method {
		case "window/showMessageRequest":
			if len(picks) == 0 {
				return nil, nil
			}
			p := picks[0]
			picks = picks[1:]
			return map[string]string{"title": p}, nil
		case "window/showDocument":
			var d struct {
				URI      string `json:"uri"`
				External bool   `json:"external"`
			}
			json.Unmarshal(params, &d)
			if d.External {
				opened <- d.URI
			}
			return map[string]bool{"success": true}, nil
		}
		return defaultAnswer(method, params)
	}, opened
}

func TestElicitorForm(t *testing.T) {
	answer, _ := answerButtons("Answer", "blue", "Yes", "Skip")
	g, c := gateEnv(t, answer)
	ans, err := g.Elicit(context.Background(), permission.Elicitation{Server: "paint", Mode: "form", Message: "Pick a colour",
		Fields: []permission.ElicitField{
			{Name: "colour", Type: "string", Enum: []string{"red", "blue"}, Required: true},
			{Name: "glossy", Type: "boolean", Required: true},
			{Name: "size", Type: "string", Enum: []string{"S", "L"}},
		}})
	if err != nil || ans.Action != "accept" || ans.Content["colour"] != "blue" || ans.Content["glossy"] != true || len(ans.Content) != 2 {
		t.Errorf("Elicit = %+v, %v; want colour blue, glossy true, size skipped", ans, err)
	}
	asks := c.All("window/showMessageRequest")
	if len(asks) != 4 || !strings.Contains(string(asks[0].Params), "paint") || !strings.Contains(string(asks[0].Params), "Pick a colour") {
		t.Errorf("questions asked: %d, first %s", len(asks), asks[0].Params)
	}
}

func TestElicitorTextFieldIsDeclined(t *testing.T) {
	answer, _ := answerButtons()
	g, c := gateEnv(t, answer)
	_, err := g.Elicit(context.Background(), permission.Elicitation{Server: "gh", Mode: "form", Message: "Your name?",
		Fields: []permission.ElicitField{{Name: "name", Type: "string"}}})
	if !errors.Is(err, permission.ErrNoHuman) {
		t.Errorf("Elicit = %v; want ErrNoHuman (declined)", err)
	}
	msg, _ := c.Await(0, "the explanation", isMethod("window/showMessage"))
	if !strings.Contains(string(msg.Params), "typed text") {
		t.Errorf("showMessage %s; want why it was declined", msg.Params)
	}
}

func TestElicitorOpenURL(t *testing.T) {
	answer, opened := answerButtons("Open")
	g, _ := gateEnv(t, answer)
	ans, err := g.Elicit(context.Background(), permission.Elicitation{Server: "auth", Mode: "url", Message: "Sign in", URL: "https://auth.example.com/x"})
	if err != nil || ans.Action != "accept" {
		t.Fatalf("Elicit = %+v, %v", ans, err)
	}
	select {
	case u := <-opened:
		if u != "https://auth.example.com/x" {
			t.Errorf("opened %q", u)
		}
	case <-time.After(wait):
		t.Error("the URL was not opened with showDocument external")
	}
	answer, _ = answerButtons("Decline")
	g, _ = gateEnv(t, answer)
	if ans, err := g.Elicit(context.Background(), permission.Elicitation{Server: "auth", Mode: "url", URL: "https://auth.example.com/x"}); err != nil || ans.Action != "decline" {
		t.Errorf("declined: %+v, %v", ans, err)
	}
}

func TestElicitorWithoutShowMessageRequest(t *testing.T) {
	g, _ := gateEnv(t, defaultAnswer)
	_, err := g.Elicit(context.Background(), permission.Elicitation{Server: "s", Mode: "url", URL: "https://x.example.com"})
	if !errors.Is(err, permission.ErrNoHuman) {
		t.Errorf("Elicit = %v; want ErrNoHuman from a client that cannot ask", err)
	}
}

func TestMCPNotices(t *testing.T) {
	var notify func(level, text string)
	_, c := gateEnvWith(t, defaultAnswer, func(s lsp.Setup) { notify = s.Notices })
	if notify == nil {
		t.Fatal("the Setup has no Notices")
	}
	notify("warning", "mcp server web failed: crashed: exit status 1")
	notify("info", "mcp server gh is ready")
	shown, _ := c.Await(0, "the warning", isMethod("window/showMessage"))
	if !strings.Contains(string(shown.Params), "mcp server web failed") || !strings.Contains(string(shown.Params), `"type":2`) {
		t.Errorf("showMessage %s; want the failure as a warning", shown.Params)
	}
	c.Await(0, "the log line", func(n note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "mcp server gh is ready")
	})
}

// A client that takes session updates also sees a server's state change
// in the stream of every running turn, as a notice of that turn; idle
// sessions get none.
func TestMCPNoticesReachRunningTurns(t *testing.T) {
	setups := make(chan lsp.Setup, 1)
	e := start(t, options{script: stall(), optIns: map[string]bool{"sessionUpdates": true},
		seenSetup: func(s lsp.Setup) { setups <- s }})
	tr := e.prompt("take your time")
	e.client.Await(0, "the answer starting", func(n note) bool {
		return n.Method == "darman/sessionUpdate" && updateOf(t, n).Update["sessionUpdate"] == "agent_message_chunk"
	})
	notify := (<-setups).Notices
	notify("warning", "mcp server web failed: crashed: exit status 1")
	n, _ := e.client.Await(0, "the notice in the turn", func(n note) bool {
		return n.Method == "darman/sessionUpdate" && updateOf(t, n).Update["sessionUpdate"] == "notice"
	})
	u := updateOf(t, n)
	if u.SessionID != tr.SessionID || u.TurnID != tr.TurnID || u.Update["level"] != "warning" || u.Update["message"] != "mcp server web failed: crashed: exit status 1" {
		t.Errorf("notice %+v; want the warning in session %s, turn %s", u, tr.SessionID, tr.TurnID)
	}
	e.client.mustCommand("darman.cancel", map[string]any{"sessionId": tr.SessionID}, nil)
	e.client.Await(0, "the turn cancelled", isState("cancelled"))
	before := len(e.client.All("darman/sessionUpdate"))
	notify("info", "mcp server gh is ready")
	e.client.Await(0, "the log line", func(n note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "mcp server gh is ready")
	})
	if after := len(e.client.All("darman/sessionUpdate")); after != before {
		t.Errorf("%d session updates after the turn ended; want none for an idle session", after-before)
	}
}
