package openai

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
	"github.com/tidwall/gjson"
)

// schemaMap turns a tool's JSON Schema into the object a request carries,
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

func dataURL(img llm.Image) string {
	return "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// classifyOpenAI fills in e from an error status of an OpenAI-compatible
// server.
func classifyOpenAI(err error, e *llm.Error) bool {
	var aerr *wire.StatusError
	if !errors.As(err, &aerr) {
		return false
	}
	e.Err = nil
	e.Status = aerr.Status
	e.Type = aerr.Code
	if e.Type == "" {
		e.Type = aerr.Type
	}
	e.Message = aerr.Message
	if e.Message == "" {
		e.Message = errorMessageFromBody(aerr.Body)
	}
	e.URL = aerr.URL
	e.RetryAfter = wire.RetryAfter(aerr.Header, time.Now())
	e.Kind = openAIKind(e.Status, aerr.Code, aerr.Type, e.Message)
	return true
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
	return wire.Truncate(strings.TrimSpace(body), 300)
}

func openAIKind(status int, code, typ, msg string) llm.Kind {
	switch {
	case code == "context_length_exceeded" || code == "string_above_max_length" ||
		((status == 400 || status == 413 || status == 0) && wire.MentionsContextTooLong(msg)):
		return llm.ErrContextTooLong
	case code == "model_not_found" || ((status == 404 || status == 400) && wire.MentionsUnknownModel(msg)):
		return llm.ErrUnknownModel
	case code == "insufficient_quota" || typ == "insufficient_quota":
		return llm.ErrBilling
	case code == "invalid_api_key":
		return llm.ErrAuth
	}
	if k := wire.KindForStatus(status); k != llm.ErrOther {
		return k
	}
	// Without a status (an error inside a stream), the type says.
	switch {
	case typ == "authentication_error":
		return llm.ErrAuth
	case code == "rate_limit_exceeded" || typ == "rate_limit_error":
		return llm.ErrRateLimited
	case code == "overloaded_error" || code == "overloaded" || typ == "overloaded_error":
		return llm.ErrOverloaded
	case typ == "server_error" || code == "server_error":
		return llm.ErrServer
	}
	return llm.ErrOther
}
