package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
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
	p, err := llm.New(llm.Settings{Name: "anthropic", BaseURL: srv.URL, APIKey: "test"}, nil)
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
	sub, err := svc.Subscribe(context.Background(), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	msg, err := svc.Prompt(context.Background(), sess.ID, "ask the server")
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
	sampled := false
events:
	for d := range sub.C() {
		switch e := d.Event; {
		case e.Kind == agent.EventUsage && e.Usage != nil && *e.Usage == (agent.Usage{Input: 21, Output: 4}):
			sampled = true
		case e.Kind == agent.EventState && e.State == agent.StateIdle:
			break events
		}
	}
	if !sampled {
		t.Error("no usage event on the session's bus for the sampling")
	}
	if s := m.Status()[0].Sampling; s != (client.SamplingUsage{Requests: 1, InputTokens: 21, OutputTokens: 4}) {
		t.Errorf("the server's sampling usage is %+v", s)
	}
}
