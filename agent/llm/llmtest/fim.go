package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// The fill-in-the-middle APIs (code completion), answered from the same
// scripts as the chat APIs.
const (
	// APICompletions is OpenAI's legacy POST /v1/completions (prompt and
	// suffix), as Ollama, vLLM, llama.cpp and DeepSeek's /beta serve it.
	APICompletions API = "completions"
	// APIGenerate is Ollama's native POST /api/generate, answered in
	// NDJSON (streamed unless "stream": false).
	APIGenerate API = "generate"
	// APIInfill is llama.cpp's POST /infill (input_prefix, input_suffix,
	// input_extra) and POST /completion (a raw prompt).
	APIInfill API = "infill"
	// APIFIM is Mistral's POST /v1/fim/completions (Codestral), answered in
	// Chat Completions' shape.
	APIFIM API = "fim"
)

// fimAPI is the FIM API of a request path, or "".
func fimAPI(method, path string) API {
	if method != http.MethodPost {
		return ""
	}
	switch {
	case strings.HasSuffix(path, "/fim/completions"):
		return APIFIM
	case strings.HasSuffix(path, "/chat/completions"):
		return ""
	case strings.HasSuffix(path, "/completions"):
		return APICompletions
	case path == "/api/generate":
		return APIGenerate
	case path == "/infill" || path == "/completion":
		return APIInfill
	}
	return ""
}

// fimRequest is what a FIM request asks.
type fimRequest struct {
	model, prompt, suffix string
	stream, includeUsage  bool
}

func parseFIM(api API, body []byte) (fimRequest, error) {
	if !gjson.ValidBytes(body) {
		return fimRequest{}, fmt.Errorf("the body is not JSON")
	}
	r := gjson.ParseBytes(body)
	f := fimRequest{model: r.Get("model").String(), stream: r.Get("stream").Bool()}
	switch api {
	case APICompletions:
		p := r.Get("prompt")
		if p.IsArray() {
			p = p.Get("0")
		}
		if p.Type != gjson.String {
			return f, fmt.Errorf("prompt: expected a string")
		}
		f.prompt, f.suffix = p.String(), r.Get("suffix").String()
		f.includeUsage = r.Get("stream_options.include_usage").Bool()
	case APIGenerate:
		f.prompt, f.suffix = r.Get("prompt").String(), r.Get("suffix").String()
		// Ollama streams unless told not to.
		f.stream = !r.Get("stream").Exists() || r.Get("stream").Bool()
	case APIInfill:
		f.prompt, f.suffix = r.Get("input_prefix").String(), r.Get("input_suffix").String()
		if !r.Get("input_prefix").Exists() {
			f.prompt = r.Get("prompt").String()
		}
	case APIFIM:
		f.prompt, f.suffix = r.Get("prompt").String(), r.Get("suffix").String()
	}
	if f.model == "" && api != APIInfill {
		return f, fmt.Errorf("model: required")
	}
	return f, nil
}

// serveFIM answers a FIM request; false when the path is not one.
//
// A FIM call has no conversation: it gets Reply's step when the script has
// Reply, else the first step of the first conversation whose Match is in
// its prompt or suffix, else Steps[k] for the k-th FIM call (the last
// step once k passes the end). Call.Conversation is the prompt; faults
// count attempts by prompt.
func (s *Server) serveFIM(w http.ResponseWriter, r *http.Request, path string) bool {
	api := fimAPI(r.Method, path)
	if api == "" {
		return false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "llmtest: reading the body: "+err.Error(), http.StatusBadRequest)
		return true
	}
	req, err := parseFIM(api, body)
	if err != nil {
		writeFIMError(w, api, http.StatusBadRequest, "", "llmtest: "+err.Error())
		return true
	}
	c := &Call{API: api, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body,
		Model: req.model, Stream: req.stream, Conversation: req.prompt,
		gone: make(chan struct{}), done: make(chan struct{})}
	defer close(c.done)

	s.mu.Lock()
	script := s.script
	key := attemptKey{"\x00fim\x00" + req.prompt + "\x00" + req.suffix, 0}
	c.Attempt = s.attempts[key]
	s.attempts[key]++
	nth := s.attempts[attemptKey{"\x00fim", 0}]
	s.attempts[attemptKey{"\x00fim", 0}]++
	s.mu.Unlock()

	var step Step
	switch {
	case script.Reply != nil:
		step = script.Reply(c)
	default:
		steps := script.Steps
		found := false
		for _, cv := range script.Conversations {
			if len(cv.Steps) > 0 && (strings.Contains(req.prompt, cv.Match) || strings.Contains(req.suffix, cv.Match)) {
				step, found = cv.Steps[0], true
				break
			}
		}
		if !found {
			if len(steps) == 0 {
				s.record(c)
				writeFIMError(w, api, http.StatusBadRequest, "", "llmtest: the script has no steps for a FIM call")
				return true
			}
			c.Step = min(nth, len(steps)-1)
			step = steps[c.Step]
		}
	}
	c.Fault = step.fault(c.Attempt)
	s.record(c)
	s.log.Info("llmtest FIM call", "api", api, "attempt", c.Attempt, "stream", c.Stream)

	if f := c.Fault; f != nil && f.Kind == FaultStatus {
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeFIMError(w, api, f.Status, f.Type, f.Message)
		return true
	}
	a := answer{call: c, step: step, conv: conversation{model: req.model, stream: req.stream, includeUsage: req.includeUsage,
		firstUser: req.prompt, size: len(req.prompt) + len(req.suffix)}}
	if !c.Stream || (c.Fault != nil && c.Fault.Kind == FaultNoStream) {
		a.writeJSON(w, r, s.quit)
		return true
	}
	out := newSSE(w, r, c, step, s.quit)
	if len(step.Events) > 0 {
		a.streamEvents(out)
		out.end()
		return true
	}
	a.streamFIM(out)
	out.end()
	return true
}

// writeFIMError answers with an HTTP error in the API's format: Ollama's
// {"error": "..."}, OpenAI's shape for the others.
func writeFIMError(w http.ResponseWriter, api API, status int, typ, msg string) {
	if api != APIGenerate {
		writeError(w, api, status, typ, msg, nil)
		return
	}
	if msg == "" {
		msg = fmt.Sprintf("scripted %d %s", status, http.StatusText(status))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// fimStop is the finish reason in the API's words.
func (a answer) fimStop() string {
	if a.step.Stop != "" {
		return a.step.Stop
	}
	if a.call.API == APIInfill {
		return "eos"
	}
	return "stop"
}

// fimJSON is the whole answer of a non-streamed FIM call.
func (a answer) fimJSON() any {
	text := strings.Join(a.step.textChunks(), "")
	u := a.usage()
	switch a.call.API {
	case APIGenerate:
		return map[string]any{"model": a.conv.model, "created_at": "2026-01-01T00:00:00Z", "response": text, "done": true,
			"done_reason": a.fimStop(), "context": []int{}, "total_duration": 1000, "prompt_eval_count": u.Input, "eval_count": u.Output}
	case APIInfill:
		return map[string]any{"content": text, "id_slot": 0, "stop": true, "model": a.conv.model, "stop_type": a.fimStop(),
			"tokens_predicted": u.Output, "tokens_evaluated": u.Input, "truncated": false}
	case APIFIM:
		return map[string]any{"id": "fim-llmtest", "object": "chat.completion", "created": 1767225600, "model": a.conv.model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text, "tool_calls": nil},
				"finish_reason": a.fimStop()}},
			"usage": fimUsage(u)}
	}
	return map[string]any{"id": "cmpl-llmtest", "object": "text_completion", "created": 1767225600, "model": a.conv.model,
		"choices": []any{map[string]any{"text": text, "index": 0, "logprobs": nil, "finish_reason": a.fimStop()}},
		"usage":   fimUsage(u)}
}

func fimUsage(u Usage) map[string]int {
	return map[string]int{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output}
}

// streamFIM streams the step's text in the API's events, then its end.
func (a answer) streamFIM(s *sse) {
	u := a.usage()
	event := func(v any) bool {
		b, _ := json.Marshal(v)
		return s.event("", b)
	}
	model := a.conv.model
	for _, t := range a.step.textChunks() {
		var v any
		switch a.call.API {
		case APIGenerate:
			v = map[string]any{"model": model, "created_at": "2026-01-01T00:00:00Z", "response": t, "done": false}
		case APIInfill:
			v = map[string]any{"content": t, "stop": false, "id_slot": 0, "index": 0}
		case APIFIM:
			v = map[string]any{"id": "fim-llmtest", "object": "chat.completion.chunk", "created": 1767225600, "model": model,
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": t}, "finish_reason": nil}}}
		default:
			v = map[string]any{"id": "cmpl-llmtest", "object": "text_completion", "created": 1767225600, "model": model,
				"choices": []any{map[string]any{"text": t, "index": 0, "logprobs": nil, "finish_reason": nil}}}
		}
		if !event(v) {
			return
		}
	}
	switch a.call.API {
	case APIGenerate:
		event(map[string]any{"model": model, "created_at": "2026-01-01T00:00:00Z", "response": "", "done": true,
			"done_reason": a.fimStop(), "context": []int{}, "total_duration": 1000, "prompt_eval_count": u.Input, "eval_count": u.Output})
	case APIInfill:
		event(map[string]any{"content": "", "stop": true, "id_slot": 0, "stop_type": a.fimStop(),
			"tokens_predicted": u.Output, "tokens_evaluated": u.Input})
	case APIFIM:
		if event(map[string]any{"id": "fim-llmtest", "object": "chat.completion.chunk", "created": 1767225600, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": ""}, "finish_reason": a.fimStop()}},
			"usage":   fimUsage(u)}) {
			s.event("", []byte("[DONE]"))
		}
	default:
		ok := event(map[string]any{"id": "cmpl-llmtest", "object": "text_completion", "created": 1767225600, "model": model,
			"choices": []any{map[string]any{"text": "", "index": 0, "logprobs": nil, "finish_reason": a.fimStop()}}})
		if ok && a.conv.includeUsage {
			ok = event(map[string]any{"id": "cmpl-llmtest", "object": "text_completion", "created": 1767225600, "model": model,
				"choices": []any{}, "usage": fimUsage(u)})
		}
		if ok {
			s.event("", []byte("[DONE]"))
		}
	}
}
