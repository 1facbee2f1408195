package llm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// fastRetry keeps retry waits short in tests.
var fastRetry = llm.RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: time.Second}

// noEnv is an environment with nothing in it.
func noEnv(string) (string, bool) { return "", false }

// apis are the three adapters, each pointed at a scripted server.
var apis = []struct {
	name string
	// settings configure a client for the server.
	settings func(srv *llmtest.Server) provider.Settings
	api      llmtest.API
}{
	{"anthropic", func(srv *llmtest.Server) provider.Settings {
		return provider.Settings{Name: "anthropic", BaseURL: srv.URL, APIKey: "sk-ant-test"}
	}, llmtest.APIAnthropic},
	{"chat", func(srv *llmtest.Server) provider.Settings {
		return provider.Settings{Name: "ollama", BaseURL: srv.OpenAIURL()}
	}, llmtest.APIChat},
	{"responses", func(srv *llmtest.Server) provider.Settings {
		return provider.Settings{Name: "openai", BaseURL: srv.OpenAIURL(), APIKey: "sk-test"}
	}, llmtest.APIResponses},
}

func newClient(t testing.TB, s provider.Settings, retry llm.RetryPolicy) *llm.Client {
	t.Helper()
	c, err := provider.New(s, &provider.Options{Retry: retry, LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// drain reads a stream to its end.
func drain(s *llm.Stream) ([]llm.Event, error) {
	defer s.Close()
	var events []llm.Event
	for s.Next() {
		events = append(events, s.Event())
	}
	return events, s.Err()
}

// joined concatenates the Text of the events of one kind.
func joined(events []llm.Event, kind llm.EventKind) string {
	var b strings.Builder
	for _, e := range events {
		if e.Kind == kind {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func ofKind(events []llm.Event, kind llm.EventKind) []llm.Event {
	var out []llm.Event
	for _, e := range events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func kinds(events []llm.Event) []llm.EventKind {
	out := make([]llm.EventKind, len(events))
	for i, e := range events {
		out[i] = e.Kind
	}
	return out
}

func ask(text string) *llm.Request {
	return &llm.Request{Model: "test-model", System: "You are terse.", Messages: []llm.Message{llm.UserText(text)}}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
