package client_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/mcp/client"
)

// A sampling request a server makes within a session's tool call is
// charged to that session: its stored usage grows by the completion's
// tokens, and a usage event says so on the session's bus, besides the
// server's own count.
func TestSamplingIsChargedToTheCallingSession(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "say hi", Steps: []llmtest.Step{{Text: "hello from the model", Usage: &llmtest.Usage{Input: 21, Output: 4}}}},
		{Match: "ask the server", Steps: []llmtest.Step{
			{ToolCalls: []llmtest.ToolCall{{Name: "s_sample", Arguments: json.RawMessage(`{}`)}}, Usage: &llmtest.Usage{Input: 100, Output: 10}},
			{Text: "it said hello", Usage: &llmtest.Usage{Input: 100, Output: 10}},
		}},
	}})
	p, err := provider.New(provider.Settings{Name: "anthropic", BaseURL: srv.URL, APIKey: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	model := func(string) (llm.Provider, string, error) { return p, "claude-sonnet-4-5", nil }
	d := fake(t, "s", "ok")
	d.SamplingMaxTokens = 64
	m := client.New([]client.Definition{d}, client.Options{Children: newRegistry(t), Sampler: client.ModelSampler{
		Model: func(context.Context) (llm.Provider, string, string, error) {
			return p, "claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", nil
		}}})
	defer m.Close()

	st, err := store.Open(context.Background(), t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := session.New(session.Options{
		Store: st, Models: model, Workspace: tool.NewDisk(t.TempDir()),
		ToolSource: func(id agent.ID) tool.Source { return m.Source(client.Audience{Session: string(id)}) },
		Rules:      []permission.Rule{{Permission: "mcp", Pattern: "*", Action: permission.Allow}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	sess, err := svc.Create(context.Background(), session.CreateOptions{Model: "anthropic/claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	sampled := false
	events := func(u session.Update) {
		if e := u.Event; e.Kind == agent.EventUsage && e.Usage != nil && *e.Usage == (agent.Usage{Input: 21, Output: 4}) {
			sampled = true
		}
	}
	msg, err := svc.Run(context.Background(), session.Turn{Session: sess.ID, Prompt: session.Text("ask the server"), Events: events})
	if err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("the turn: %+v, %v", msg, err)
	}
	got, err := st.Session(context.Background(), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Usage.Input != 221 || got.Usage.Output != 24 {
		t.Errorf("the session's usage is %+v; want the turn's 200 in, 20 out and the sampling's 21 in, 4 out", got.Usage)
	}
	if !sampled {
		t.Error("no usage event on the session's bus for the sampling")
	}
	if s := m.Status()[0].Sampling; s != (client.SamplingUsage{Requests: 1, InputTokens: 21, OutputTokens: 4}) {
		t.Errorf("the server's sampling usage is %+v", s)
	}
}

// A server on an older protocol asks for sampling over its connection,
// unrelated to the call it serves: the sampling is charged to the session
// when only that session has calls in flight on the server, and to no
// session (the server's count only) when another session has one too.
func TestSamplingFromAnOlderServerIsChargedToTheOnlySessionCalling(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "marks")
	d := fake(t, "old", "probe-exit") // falls back to initialize: no multi-round-trip
	d.SamplingMaxTokens = 50
	d.Env["DARMAN_FAKE_MARK"] = mark
	m := client.New([]client.Definition{d}, client.Options{Children: newRegistry(t), Sampler: &fakeSampler{}})
	defer m.Close()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	tools, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		charged = map[agent.ID][]agent.Usage{}
	)
	env := func(id agent.ID) *tool.Env {
		e := (&recorder{}).env()
		e.SessionID = id
		e.Charge = func(u agent.Usage, _ float64) {
			mu.Lock()
			defer mu.Unlock()
			charged[id] = append(charged[id], u)
		}
		return e
	}
	sample := func() {
		t.Helper()
		res, err := find(t, tools, "old_sample").Run(context.Background(), env("ses_a"), json.RawMessage(`{}`))
		if err != nil || !strings.Contains(res.Output, "hi there") {
			t.Fatalf("old_sample: %+v, %v", res, err)
		}
	}

	sample()
	mu.Lock()
	if got := charged["ses_a"]; len(got) != 1 || got[0] != (agent.Usage{Input: 12, Output: 3}) {
		t.Errorf("the only session calling was charged %+v; want 12 in, 3 out", got)
	}
	mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		find(t, tools, "old_hang").Run(ctx, env("ses_b"), json.RawMessage(`{}`))
	}()
	waitFor(t, "the other session's call to be running", func() bool {
		data, _ := os.ReadFile(mark)
		return strings.Contains(string(data), "hanging")
	})
	sample()
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(charged["ses_a"]) != 1 || len(charged["ses_b"]) != 0 {
		t.Errorf("with two sessions calling, the sessions were charged %+v; want neither", charged)
	}
	if s := m.Status()[0].Sampling; s.Requests != 2 || s.InputTokens != 24 {
		t.Errorf("the server's sampling usage is %+v; want both requests", s)
	}
}
