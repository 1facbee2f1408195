package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// replay answers every request with the same recorded event stream, so
// that a fuzzed body goes through the whole client: the HTTP exchange,
// darman's SSE decoder and the API's translation.
type replay []byte

func (r replay) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: 200, Request: req,
		Header: http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:   io.NopCloser(bytes.NewReader(r)),
	}, nil
}

var fuzzAPIs = []llmtest.API{llmtest.APIAnthropic, llmtest.APIChat, llmtest.APIResponses}

// recordedStreams fetches real streams of every API from the scripted
// server: text, reasoning, tool calls, and each in-stream fault.
func recordedStreams(f *testing.F) map[llmtest.API][][]byte {
	steps := []llmtest.Step{
		{Reasoning: "think \"hard\"\n", Text: "héllo wörld\t!", ToolCalls: []llmtest.ToolCall{
			{Name: "read", Arguments: json.RawMessage(`{"path":"a\\b.go"}`)},
			{Name: "grep", Arguments: json.RawMessage(`{"pattern":"x"}`), Chunks: 5},
		}, Interleave: true},
		{Text: "cut", Faults: []llmtest.Fault{{Kind: llmtest.FaultMalformed, After: 3, Times: -1}}},
		{Text: "error", Faults: []llmtest.Fault{{Kind: llmtest.FaultErrorEvent, After: 2, Times: -1}}},
	}
	srv, err := llmtest.NewServer(llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		for i := range steps {
			if strings.HasSuffix(c.Conversation, string(rune('0'+i))) {
				return steps[i]
			}
		}
		return steps[0]
	}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	requests := map[llmtest.API]struct{ path, body string }{
		llmtest.APIAnthropic: {"/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"step %d"}]}`},
		llmtest.APIChat:      {"/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"step %d"}]}`},
		llmtest.APIResponses: {"/v1/responses", `{"model":"m","stream":true,"input":"step %d"}`},
	}
	out := map[llmtest.API][][]byte{}
	for _, api := range fuzzAPIs {
		for i := range steps {
			r := requests[api]
			body := strings.Replace(r.body, "%d", string(rune('0'+i)), 1)
			res, err := http.Post(srv.URL+r.path, "application/json", strings.NewReader(body))
			if err != nil {
				f.Fatal(err)
			}
			data, _ := io.ReadAll(res.Body)
			res.Body.Close()
			out[api] = append(out[api], data)
		}
	}
	return out
}

// FuzzStream feeds arbitrary SSE bytes through each API's event handling:
// it must never panic, and every failure must be an *Error.
func FuzzStream(f *testing.F) {
	for api, streams := range recordedStreams(f) {
		for _, s := range streams {
			f.Add(apiIndex(api), s)
		}
	}
	f.Add(uint8(0), []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":99999999999}\n\n"))
	f.Add(uint8(1), []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-1}]}}]}\n\ndata: [DONE]\n\n"))
	f.Add(uint8(2), []byte("event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0}\n\n"))
	// OpenRouter's reasoning_details fragments, Gemini's index-less calls.
	f.Add(uint8(1), []byte(`data: {"choices":[{"index":0,"delta":{"reasoning":"a","reasoning_details":[{"type":"reasoning.text","text":"a","index":0},{"type":"reasoning.encrypted","data":null}]}}]}`+"\n\n"+
		`data: {"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","signature":"s","index":0}],"tool_calls":[{"id":"x","extra_content":{"google":{}},"function":{"name":"read","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n"))

	settings := map[llmtest.API]provider.Settings{
		llmtest.APIAnthropic: {Name: "anthropic", BaseURL: "http://fuzz", APIKey: "k"},
		llmtest.APIChat:      {Name: "ollama", BaseURL: "http://fuzz/v1"},
		llmtest.APIResponses: {Name: "openai", BaseURL: "http://fuzz/v1", APIKey: "k"},
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		api := fuzzAPIs[int(which)%len(fuzzAPIs)]
		c, err := provider.New(settings[api], &provider.Options{
			HTTPClient: &http.Client{Transport: replay(body)}, Retry: llm.RetryPolicy{MaxAttempts: 1},
			LookupEnv: func(string) (string, bool) { return "", false },
		})
		if err != nil {
			t.Fatal(err)
		}
		s := c.Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}})
		var last llm.Event
		n := 0
		for s.Next() {
			last = s.Event()
			n++
			if n > 1<<20 {
				t.Fatal("the stream does not end")
			}
		}
		err = s.Err()
		var e *llm.Error
		switch {
		case err == nil && last.Kind != llm.EventFinish:
			t.Fatalf("%s: a stream without error ended with %v", api, last.Kind)
		case err != nil && !errors.As(err, &e):
			t.Fatalf("%s: untyped error %T: %v", api, err, err)
		case err != nil && e.Error() == "":
			t.Fatalf("%s: empty message", api)
		}
	})
}

func apiIndex(api llmtest.API) uint8 {
	for i, a := range fuzzAPIs {
		if a == api {
			return uint8(i)
		}
	}
	return 0
}
