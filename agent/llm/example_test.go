package llm_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

func ExampleClient_Stream() {
	srv, _ := llmtest.NewServer(llmtest.Script{Steps: []llmtest.Step{{
		Text:      "Let me look.",
		ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"main.go"}`)}},
	}}}, nil)
	defer srv.Close()

	client, err := provider.New(provider.Settings{Name: "ollama", BaseURL: srv.OpenAIURL()}, nil)
	if err != nil {
		panic(err)
	}
	s := client.Stream(context.Background(), &llm.Request{
		Model:    "qwen3:8b",
		System:   "You are a coding agent.",
		Messages: []llm.Message{llm.UserText("What is in main.go?")},
		Tools:    []llm.Tool{{Name: "read", Description: "Read a file."}},
	})
	defer s.Close()
	for s.Next() {
		switch ev := s.Event(); ev.Kind {
		case llm.EventTextDelta:
			fmt.Printf("text %q\n", ev.Text)
		case llm.EventToolCallEnd:
			fmt.Printf("call %s %s\n", ev.ToolCall.Name, ev.ToolCall.Arguments)
		case llm.EventFinish:
			fmt.Println("finish", ev.Finish)
		}
	}
	if err := s.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// text "Let "
	// text "me "
	// text "look."
	// call read {"path":"main.go"}
	// finish tool_use
}

func ExampleCollect() {
	srv, _ := llmtest.NewServer(llmtest.Script{Steps: []llmtest.Step{{
		Text: "Done.", Usage: &llmtest.Usage{Input: 1000, Output: 20},
	}}}, nil)
	defer srv.Close()

	client, _ := provider.New(provider.Settings{Name: "anthropic", BaseURL: srv.URL, APIKey: "test"}, nil)
	r, err := llm.Collect(client.Stream(context.Background(), &llm.Request{
		Model: "claude-sonnet-4-5", Messages: []llm.Message{llm.UserText("hi")},
	}))
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Text(), r.Finish, r.Usage.Input, r.Usage.Output)
	fmt.Printf("$%.4f\n", r.Cost)
	// Output:
	// Done. stop 1000 20
	// $0.0033
}
