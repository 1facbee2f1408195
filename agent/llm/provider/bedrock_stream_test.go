package provider

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/darman-dev/darman/agent/llm"
)

// bedrockMessage is one message of an AWS event stream.
func bedrockMessage(headers map[string]string, payload string) eventstream.Message {
	m := eventstream.Message{Payload: []byte(payload)}
	for k, v := range headers {
		m.Headers.Set(k, eventstream.StringValue(v))
	}
	return m
}

func bedrockChunk(event string) eventstream.Message {
	return bedrockMessage(map[string]string{":message-type": "event", ":event-type": "chunk"},
		`{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(event))+`"}`)
}

// A Bedrock stream's exceptions and errors end the answer as Anthropic's
// error events would, with Bedrock's exception name as the error's type;
// events of other types are skipped.
func TestBedrockStreamErrors(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	start := bedrockChunk(`{"type":"message_start","message":{"usage":{"input_tokens":3}}}`)
	block := bedrockChunk(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	delta := bedrockChunk(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`)
	other := bedrockMessage(map[string]string{":message-type": "event", ":event-type": "metrics"}, `{}`)
	cases := []struct {
		name, typ, message string
		kind               llm.Kind
		last               eventstream.Message
	}{
		{"exception", "throttlingException", "Too many requests, please wait.", llm.ErrServer,
			bedrockMessage(map[string]string{":message-type": "exception", ":exception-type": "throttlingException"},
				`{"message":"Too many requests, please wait."}`)},
		{"exception without a type header", "modelStreamErrorException", "UnknownError", llm.ErrServer,
			bedrockMessage(map[string]string{":message-type": "exception"}, `{"__type":"modelStreamErrorException"}`)},
		{"error", "InternalFailure", "the stream broke", llm.ErrServer,
			bedrockMessage(map[string]string{":message-type": "error", ":error-code": "InternalFailure", ":error-message": "the stream broke"}, ``)},
		{"overloaded chunk", "overloaded_error", "Overloaded", llm.ErrOverloaded,
			bedrockChunk(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
				enc := eventstream.NewEncoder()
				for _, m := range []eventstream.Message{start, other, block, delta, c.last} {
					if err := enc.Encode(w, m); err != nil {
						t.Error(err)
					}
				}
			}))
			defer srv.Close()
			cl, err := New(Settings{Name: "bedrock", APIKey: "k", Region: "us-east-1", BaseURL: srv.URL},
				&Options{LookupEnv: func(string) (string, bool) { return "", false }, Retry: llm.RetryPolicy{MaxAttempts: 1}})
			if err != nil {
				t.Fatal(err)
			}
			s := cl.Stream(context.Background(), &llm.Request{Model: "anthropic.claude-sonnet-4-5-20250929-v1:0", Messages: []llm.Message{llm.UserText("hi")}})
			text := ""
			for s.Next() {
				if ev := s.Event(); ev.Kind == llm.EventTextDelta {
					text += ev.Text
				}
			}
			var e *llm.Error
			if !errors.As(s.Err(), &e) {
				t.Fatalf("error %v", s.Err())
			}
			if e.Kind != c.kind || e.Type != c.typ || e.Message != c.message || text != "Hel" {
				t.Errorf("kind %s, type %q, message %q, text %q; want %s, %q, %q after \"Hel\"", e.Kind, e.Type, e.Message, text, c.kind, c.typ, c.message)
			}
		})
	}
}
