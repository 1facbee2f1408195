package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"
)

// openAIStream posts a streamed request with the SDK, which sends it,
// reports API errors and frames the SSE stream; darman reads the events
// itself (see sse.go for why).
func openAIStream(ctx context.Context, client *openai.Client, path string, params any) (ssestream.Decoder, error) {
	var raw *http.Response
	if err := client.Post(ctx, path, params, &raw, option.WithJSONSet("stream", true)); err != nil {
		return nil, err
	}
	if err := checkEventStream(raw); err != nil {
		return nil, err
	}
	return ssestream.NewDecoder(raw), nil
}

// openAIOptions configure the OpenAI SDK for one provider. The services
// are built from these options alone, not through openai.NewClient, so that
// OPENAI_* variables meant for OpenAI never leak into requests to another
// server.
func openAIOptions(t transport) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithBaseURL(t.baseURL + "/"),
		option.WithHTTPClient(t.http),
		option.WithMaxRetries(0),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			return t.idle.do(r, next)
		}),
	}
	if t.key != "" {
		opts = append(opts, option.WithAPIKey(t.key))
	}
	for k, v := range t.headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return opts
}

// openAIModels lists the models of an OpenAI or compatible server.
func openAIModels(ctx context.Context, list openai.ModelService) ([]string, error) {
	page, err := list.List(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(page.Data))
	for i, m := range page.Data {
		ids[i] = m.ID
	}
	return ids, nil
}

// schemaMap turns a tool's JSON Schema into the map the OpenAI SDK wants,
// keeping each value as raw JSON so that nothing is re-encoded.
func schemaMap(schema json.RawMessage) (map[string]any, error) {
	if len(schema) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(schema, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		out[k] = v
	}
	return out, nil
}

func dataURL(img Image) string {
	return "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// classifyOpenAI fills in e from the OpenAI SDK's error for an API error
// response.
func classifyOpenAI(err error, e *Error) bool {
	var aerr *openai.Error
	switch {
	case errors.As(err, &aerr):
		e.Err = nil
		e.Status = aerr.StatusCode
		e.Type = aerr.Code
		if e.Type == "" {
			e.Type = aerr.Type
		}
		e.Message = aerr.Message
		if e.Message == "" {
			e.Message = errorMessageFromBody(aerr.RawJSON())
		}
		if aerr.Request != nil {
			e.URL = aerr.Request.URL.String()
		}
		if aerr.Response != nil {
			e.RetryAfter = retryAfter(aerr.Response.Header, time.Now())
		}
		e.Kind = openAIKind(e.Status, aerr.Code, aerr.Type, e.Message)
		return true
	}
	return false
}

// errorMessageFromBody digs a message out of error bodies that are not
// OpenAI's shape ({"error":"..."}, {"message":"..."}, or plain text).
func errorMessageFromBody(body string) string {
	if m := gjson.Get(body, "error.message"); m.Exists() {
		return m.String()
	}
	if m := gjson.Get(body, "error"); m.Type == gjson.String {
		return m.String()
	}
	if m := gjson.Get(body, "message"); m.Type == gjson.String {
		return m.String()
	}
	return truncate(strings.TrimSpace(body), 300)
}

func openAIKind(status int, code, typ, msg string) Kind {
	switch {
	case code == "context_length_exceeded" || code == "string_above_max_length" ||
		((status == 400 || status == 413 || status == 0) && mentionsContextTooLong(msg)):
		return ErrContextTooLong
	case code == "model_not_found" || ((status == 404 || status == 400) && mentionsUnknownModel(msg)):
		return ErrUnknownModel
	case code == "insufficient_quota" || typ == "insufficient_quota":
		return ErrBilling
	case code == "invalid_api_key":
		return ErrAuth
	}
	if k := kindForStatus(status); k != ErrOther {
		return k
	}
	// Without a status (an error inside a stream), the type says.
	switch {
	case typ == "authentication_error":
		return ErrAuth
	case code == "rate_limit_exceeded" || typ == "rate_limit_error":
		return ErrRateLimited
	case code == "overloaded_error" || code == "overloaded" || typ == "overloaded_error":
		return ErrOverloaded
	case typ == "server_error" || code == "server_error":
		return ErrServer
	}
	return ErrOther
}
