package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// answer writes one scripted step in a call's wire format.
type answer struct {
	call *Call
	step Step
	conv conversation
}

func (a answer) reasoningChunks() []string { return split(a.step.Reasoning, a.step.Chunks) }

func (a answer) argChunks(tc ToolCall) []string {
	args := string(tc.Arguments)
	if args == "" {
		args = "{}"
	}
	n := tc.Chunks
	if n == 0 {
		n = 3
	}
	return split(args, n)
}

func (a answer) arguments(tc ToolCall) string {
	if len(tc.Arguments) == 0 {
		return "{}"
	}
	return string(tc.Arguments)
}

func (a answer) toolID(i int, tc ToolCall, prefix string) string {
	if tc.ID != "" {
		return tc.ID
	}
	return fmt.Sprintf("%s_%d_%d", prefix, a.call.Step, i)
}

func (a answer) signature(fallback string) string {
	if a.step.Signature != "" {
		return a.step.Signature
	}
	return fmt.Sprintf("%s-step%d", fallback, a.call.Step)
}

// usage is the step's usage, or an estimate.
func (a answer) usage() Usage {
	if a.step.Usage != nil {
		return *a.step.Usage
	}
	out := len(a.step.textChunks()) + len(a.reasoningChunks())
	for _, tc := range a.step.ToolCalls {
		out += len(a.argChunks(tc))
	}
	return Usage{Input: max(a.conv.size/4, 1), Output: max(out, 1)}
}

// stopReason is the step's stop reason in the words of api.
func (a answer) stopReason(api API) string {
	if a.step.Stop != "" {
		return a.step.Stop
	}
	tools := len(a.step.ToolCalls) > 0
	switch {
	case api == APIAnthropic && tools:
		return "tool_use"
	case api == APIAnthropic:
		return "end_turn"
	case tools:
		return "tool_calls"
	}
	return "stop"
}

func (a answer) text() string {
	if a.step.TextChunks == nil {
		return a.step.Text
	}
	return strings.Join(a.step.TextChunks, "")
}

// writeJSON answers a request that did not ask for a stream.
func (a answer) writeJSON(w http.ResponseWriter, r *http.Request, quit <-chan struct{}) {
	if f := a.call.Fault; f != nil {
		switch f.Kind {
		case FaultNoStream:
		case FaultCut:
			panic(http.ErrAbortHandler)
		case FaultStall:
			select {
			case <-r.Context().Done():
				a.call.markGone()
			case <-quit:
			}
			return
		case FaultMalformed:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"truncated","content":[`))
			return
		case FaultErrorEvent:
			writeError(w, a.call.API, http.StatusInternalServerError, f.Type, f.Message, nil)
			return
		}
	}
	var v any
	switch a.call.API {
	case APIAnthropic:
		v = a.anthropicMessage()
	case APIChat:
		v = a.chatCompletion()
	case APIResponses:
		v = a.response()
	default:
		v = a.fimJSON()
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// writeError answers with an HTTP error in the API's format.
func writeError(w http.ResponseWriter, api API, status int, typ, msg string, h http.Header) {
	for k, v := range h {
		w.Header()[k] = v
	}
	if msg == "" {
		msg = fmt.Sprintf("scripted %d %s", status, http.StatusText(status))
	}
	var body []byte
	if api == APIAnthropic {
		if typ == "" {
			typ = anthropicErrorType(status)
		}
		body = append(body, `{"type":"error","error":{"type":`...)
		body = appendString(body, typ)
		body = append(body, `,"message":`...)
		body = appendString(body, msg)
		body = append(body, `},"request_id":"req_llmtest"}`...)
	} else {
		errType, code := openAIErrorType(status)
		if typ != "" {
			code = typ
		}
		body = append(body, `{"error":{"message":`...)
		body = appendString(body, msg)
		body = append(body, `,"type":`...)
		body = appendString(body, errType)
		body = append(body, `,"param":null,"code":`...)
		if code == "" {
			body = append(body, "null"...)
		} else {
			body = appendString(body, code)
		}
		body = append(body, "}}"...)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_llmtest")
	w.WriteHeader(status)
	w.Write(body)
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 408, 504:
		return "timeout_error"
	case 409:
		return "conflict_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func openAIErrorType(status int) (typ, code string) {
	switch {
	case status == 401:
		return "invalid_request_error", "invalid_api_key"
	case status == 404:
		return "invalid_request_error", "model_not_found"
	case status == 429:
		return "requests", "rate_limit_exceeded"
	case status >= 500:
		return "server_error", "server_error"
	}
	return "invalid_request_error", ""
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }
