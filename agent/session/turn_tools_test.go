package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/darman-dev/darman/agent"

	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/tool"
)

// TestTurnToolsAreTheTurnsOwn: a turn's extra tools are
// offered besides the service's, one with a service tool's name takes its
// place (and is the one that runs), and the next plain turn is back to the
// service's tools.
func TestTurnToolsAreTheTurnsOwn(t *testing.T) {
	shared := &probe{name: "look"}
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "look", Arguments: json.RawMessage(`{"x":"1"}`)}}},
		{Text: "looked"},
		{Text: "plain"},
	}}, nil, shared)
	own := &probe{name: "look"}
	extra := &probe{name: "session_only"}
	if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("look around"), Tools: []tool.Tool{own, extra}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("again")}); err != nil {
		t.Fatal(err)
	}
	calls := f.srv.ModelCalls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls", len(calls))
	}
	if got := strings.Join(offeredNames(calls[0].Body), ","); got != "look,session_only" {
		t.Errorf("the turn with extra tools offered %s", got)
	}
	if got := strings.Join(offeredNames(calls[2].Body), ","); got != "look" {
		t.Errorf("the plain turn offered %s", got)
	}
	if own.maxSeen.Load() != 1 || shared.maxSeen.Load() != 0 {
		t.Errorf("the turn's own look ran %d times, the service's %d", own.maxSeen.Load(), shared.maxSeen.Load())
	}
}

// source is a tool.Source whose tools and failure the test changes
// between (and during) turns.
type source struct {
	mu    sync.Mutex
	tools []tool.Tool
	err   error
	asked []agent.ID
}

func (s *source) set(err error, tools ...tool.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools, s.err = tools, err
}

func (s *source) forSession(id agent.ID) tool.Source {
	return tool.SourceFunc(func(context.Context) ([]tool.Tool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.asked = append(s.asked, id)
		return slices.Clone(s.tools), s.err
	})
}

// addsTool is a tool whose call makes the source offer another tool, as an
// MCP server's tools/list_changed does in the middle of a turn.
type addsTool struct {
	probe
	src   *source
	added tool.Tool
}

func (a *addsTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	a.src.set(nil, a, a.added)
	return a.probe.Run(ctx, env, input)
}

// TestToolSourceIsAskedEveryStep: the source's tools come after the
// service's; a tool it starts offering in the middle of a turn is offered
// from the next model call on; when it fails (a required MCP server that
// is not ready) the turn fails with its error, stores nothing and calls no
// model; and once it serves again the next turn runs.
func TestToolSourceIsAskedEveryStep(t *testing.T) {
	src := &source{}
	added := &probe{name: "late"}
	adds := &addsTool{probe: probe{name: "adds"}, src: src, added: added}
	src.set(nil, adds)
	f := newFixture(t, fixtureOptions{script: llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "adds", Arguments: json.RawMessage(`{}`)}}},
		{ToolCalls: []llmtest.ToolCall{{Name: "late", Arguments: json.RawMessage(`{}`)}}},
		{Text: "done"},
		{Text: "back"},
	}}, tools: []tool.Tool{&probe{name: "builtin"}}, service: func(o *session.Options) { o.ToolSource = src.forSession }})

	if msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("first")}); err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("first turn: %+v, %v", msg, err)
	}
	calls := f.srv.ModelCalls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls; want 3", len(calls))
	}
	if got := strings.Join(offeredNames(calls[0].Body), ","); got != "builtin,adds" {
		t.Errorf("the first step offered %s; want builtin,adds", got)
	}
	if got := strings.Join(offeredNames(calls[1].Body), ","); got != "builtin,adds,late" {
		t.Errorf("the step after the source changed offered %s; want builtin,adds,late", got)
	}
	if added.maxSeen.Load() != 1 {
		t.Error("the tool the source added mid-turn did not run")
	}

	src.set(errors.New("mcp server db (required): handshake timeout: no answer within 5s"))
	before, _ := f.store.Messages(context.Background(), f.sess.ID)
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("second")})
	if err != nil || msg.Finish != agent.FinishError || !strings.Contains(msg.Error, "mcp server db (required): handshake timeout") {
		t.Fatalf("a turn whose source fails: %+v, %v; want a failed turn naming the server", msg, err)
	}
	after, _ := f.store.Messages(context.Background(), f.sess.ID)
	if len(after) != len(before) || len(f.srv.ModelCalls()) != 3 {
		t.Errorf("the failed turn stored %d messages and made %d model calls; want none", len(after)-len(before), len(f.srv.ModelCalls())-3)
	}

	src.set(nil, adds)
	if msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("third")}); err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("the turn after the source recovered: %+v, %v", msg, err)
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	for _, id := range src.asked {
		if id != f.sess.ID {
			t.Fatalf("the source was asked for session %s; want %s", id, f.sess.ID)
		}
	}
}

func offeredNames(body []byte) []string {
	var req struct{ Tools []struct{ Name string } }
	json.Unmarshal(body, &req)
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Name)
	}
	return out
}
