package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
	"github.com/tidwall/gjson"
)

// fimWire speaks the fill-in-the-middle APIs of a provider's server.
type fimWire struct {
	// name is the provider's name (DeepSeek's FIM is elsewhere).
	name string
	t    *wire.Transport
}

// NewFIM is the wire of the fill-in-the-middle APIs of the server at t's
// base URL; provider is its configured name (DeepSeek's FIM is on its beta
// endpoint). It reads t when a call starts, so changes made to t after
// (Azure's) apply.
func NewFIM(provider string, t *wire.Transport) llm.FIMWire { return &fimWire{name: provider, t: t} }

func (w *fimWire) FIM(ctx context.Context, req *llm.FIMRequest) (llm.FIMSource, error) {
	var a *fimAnswer
	var err error
	switch req.API {
	case llm.FIMCompletions, "":
		a, err = w.completions(ctx, req)
	case llm.FIMOllama:
		a, err = w.ollama(ctx, req)
	case llm.FIMInfill:
		a, err = w.infill(ctx, req)
	case llm.FIMMistral:
		a, err = w.mistral(ctx, req)
	default:
		return nil, fmt.Errorf("unknown FIM API %q", req.API)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

func (w *fimWire) Classify(err error, e *llm.Error) bool { return classifyOpenAI(err, e) }

// fimAnswer is a FIM answer being read: next reads a piece, usage and
// stop are what the server reported so far.
type fimAnswer struct {
	next  func() (string, bool, error)
	close func() error
	usage llm.Usage
	// stop is the server's finish reason, when it said.
	stop string
}

func (a *fimAnswer) Next() (string, bool, error) { return a.next() }
func (a *fimAnswer) End() (llm.Usage, string)    { return a.usage, a.stop }

func (a *fimAnswer) Close() error {
	if a.close == nil {
		return nil
	}
	return a.close()
}

// fimPrompt is what a templated request sends, and the stop sequences it
// adds.
func fimPrompt(req *llm.FIMRequest) (string, []string) {
	stop := req.Stop
	if req.Template == nil {
		return req.Prefix, stop
	}
	return req.Template.Render(req.Prefix, req.Suffix, req.Files), append(slices.Clone(stop), req.Template.Stop...)
}

// nativeBase is the server's root for native APIs (Ollama's /api,
// llama.cpp's /infill): the base URL without its OpenAI "/v1".
func (w *fimWire) nativeBase() string {
	return strings.TrimSuffix(strings.TrimSuffix(w.t.BaseURL, "/"), "/v1")
}

func (w *fimWire) completions(ctx context.Context, req *llm.FIMRequest) (*fimAnswer, error) {
	t := *w.t
	if w.name == "deepseek" && !strings.HasSuffix(t.BaseURL, "/beta") {
		// api-docs.deepseek.com: FIM is only on the beta endpoint.
		t.BaseURL = strings.TrimSuffix(t.BaseURL, "/v1") + "/beta"
	}
	prompt, stop := fimPrompt(req)
	p := completionParams{Model: req.Model, Prompt: prompt, MaxTokens: req.MaxTokens, Temperature: req.Temperature}
	if req.Template == nil {
		p.Suffix = &req.Suffix
	}
	if len(stop) > 0 {
		p.Stop = capStop(stop, 4)
	}
	client := wire.APIClient{Transport: t}
	if req.NoStream {
		body, err := wire.EncodeJSON(p)
		if err != nil {
			return nil, err
		}
		res, err := client.Do(ctx, http.MethodPost, "completions", body, false)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return nil, err
		}
		s := &fimAnswer{}
		text, _, err := s.completion(b)
		if err != nil {
			return nil, err
		}
		s.next = once(text)
		return s, nil
	}
	p.Stream = true
	p.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	body, err := wire.EncodeJSON(p)
	if err != nil {
		return nil, err
	}
	raw, err := client.Do(ctx, http.MethodPost, "completions", body, true)
	if err != nil {
		return nil, err
	}
	s := &fimAnswer{close: raw.Body.Close}
	if isJSON(raw) {
		// A server that ignores "stream": true.
		s.next = whole(raw.Body, s.completion)
		return s, nil
	}
	events := wire.NewSSEDecoder(raw.Body)
	s.close = events.Close
	done := false
	s.next = func() (string, bool, error) {
		if done {
			return "", false, nil
		}
		for {
			more := events.Next()
			data := events.Event().Data
			if !more || bytes.HasPrefix(data, []byte("[DONE]")) {
				done = true
				if err := events.Err(); err != nil {
					return "", false, err
				}
				if s.stop == "" {
					return "", false, &llm.Error{Kind: llm.ErrStreamCut, Message: "the stream ended before its finish_reason"}
				}
				return "", false, nil
			}
			chunk, ok, bad := wire.EventJSON(events.Event().Type, data)
			if bad != nil {
				done = true
				return "", false, bad
			}
			if !ok {
				continue
			}
			if e := chunk.Get("error"); e.Exists() {
				done = true
				return "", false, chatStreamError(e)
			}
			text, reason := s.chunk(chunk)
			if reason != "" {
				s.stop = reason
			}
			return text, true, nil
		}
	}
	return s, nil
}

// completionParams is a request of the legacy completions API.
type completionParams struct {
	Model         string             `json:"model"`
	Prompt        string             `json:"prompt"`
	Suffix        *string            `json:"suffix,omitempty"`
	MaxTokens     int                `json:"max_tokens,omitempty"`
	Temperature   *float64           `json:"temperature,omitempty"`
	Stop          []string           `json:"stop,omitempty"`
	Stream        bool               `json:"stream,omitempty"`
	StreamOptions *chatStreamOptions `json:"stream_options,omitempty"`
}

// chunk reads the text and finish reason of a completion or a chunk of
// one, and its usage where it has some.
func (s *fimAnswer) chunk(r gjson.Result) (text, reason string) {
	if u := r.Get("usage"); u.IsObject() {
		in, out := int(u.Get("prompt_tokens").Int()), int(u.Get("completion_tokens").Int())
		if in > 0 || out > 0 {
			s.usage = llm.Usage{Input: in, Output: out}
		}
	}
	c := r.Get("choices.0")
	return c.Get("text").String(), c.Get("finish_reason").String()
}

// completion reads a whole (not streamed) completion.
func (s *fimAnswer) completion(b []byte) (string, bool, error) {
	if !gjson.ValidBytes(b) {
		return "", false, &json.SyntaxError{}
	}
	text, reason := s.chunk(gjson.ParseBytes(b))
	s.stop = reason
	return text, false, nil
}

// capStop keeps at most n stop sequences: OpenAI's API takes four.
func capStop(stop []string, n int) []string {
	if len(stop) > n {
		return stop[:n]
	}
	return stop
}

func (w *fimWire) ollama(ctx context.Context, req *llm.FIMRequest) (*fimAnswer, error) {
	prompt, stop := fimPrompt(req)
	body := map[string]any{"model": req.Model, "prompt": prompt, "stream": !req.NoStream}
	if req.Template == nil {
		body["suffix"] = req.Suffix
	} else {
		body["raw"] = true
	}
	opts := map[string]any{}
	if req.MaxTokens > 0 {
		opts["num_predict"] = req.MaxTokens
	}
	if req.Temperature != nil {
		opts["temperature"] = *req.Temperature
	}
	if len(stop) > 0 {
		opts["stop"] = stop
	}
	if len(opts) > 0 {
		body["options"] = opts
	}
	res, err := w.post(ctx, w.nativeBase()+"/api/generate", body)
	if err != nil {
		return nil, err
	}
	s := &fimAnswer{close: res.Body.Close}
	read := func(line []byte) (string, bool, error) {
		var m struct {
			Response        string `json:"response"`
			Done            bool   `json:"done"`
			DoneReason      string `json:"done_reason"`
			PromptEvalCount int    `json:"prompt_eval_count"`
			EvalCount       int    `json:"eval_count"`
			Error           string `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			return "", false, err
		}
		if m.Error != "" {
			return "", false, &llm.Error{Kind: llm.ErrServer, Message: m.Error}
		}
		if m.Done {
			s.usage, s.stop = llm.Usage{Input: m.PromptEvalCount, Output: m.EvalCount}, m.DoneReason
		}
		return m.Response, !m.Done, nil
	}
	s.next = lines(res.Body, read, "Ollama's answer ended before done:true")
	return s, nil
}

func (w *fimWire) infill(ctx context.Context, req *llm.FIMRequest) (*fimAnswer, error) {
	prompt, stop := fimPrompt(req)
	body := map[string]any{"stream": !req.NoStream, "cache_prompt": true}
	if req.Model != "" {
		body["model"] = req.Model
	}
	url := w.nativeBase() + "/infill"
	if req.Template == nil {
		body["input_prefix"], body["input_suffix"] = req.Prefix, req.Suffix
		extra := make([]map[string]string, 0, len(req.Files))
		for _, f := range req.Files {
			extra = append(extra, map[string]string{"filename": f.Path, "text": f.Text})
		}
		body["input_extra"] = extra
	} else {
		url = w.nativeBase() + "/completion"
		body["prompt"] = prompt
	}
	if req.MaxTokens > 0 {
		body["n_predict"] = req.MaxTokens
	}
	if req.Temperature != nil {
		body["temperature"] = *req.Temperature
	}
	if len(stop) > 0 {
		body["stop"] = stop
	}
	res, err := w.post(ctx, url, body)
	if err != nil {
		return nil, err
	}
	s := &fimAnswer{close: res.Body.Close}
	read := func(data []byte) (string, bool, error) {
		var m struct {
			Content         string `json:"content"`
			Stop            bool   `json:"stop"`
			StopType        string `json:"stop_type"`
			TokensPredicted int    `json:"tokens_predicted"`
			TokensEvaluated int    `json:"tokens_evaluated"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return "", false, err
		}
		if e := gjson.GetBytes(data, "error"); e.Exists() {
			return "", false, &llm.Error{Kind: llm.ErrServer, Message: errorMessageFromBody(string(data))}
		}
		if m.Stop {
			s.usage, s.stop = llm.Usage{Input: m.TokensEvaluated, Output: m.TokensPredicted}, m.StopType
		}
		return m.Content, !m.Stop, nil
	}
	if isJSON(res) {
		s.next = whole(res.Body, read)
	} else {
		s.next = sse(res.Body, read, "llama.cpp's stream ended before stop:true")
	}
	return s, nil
}

func (w *fimWire) mistral(ctx context.Context, req *llm.FIMRequest) (*fimAnswer, error) {
	body := map[string]any{"model": req.Model, "prompt": req.Prefix, "suffix": req.Suffix, "stream": !req.NoStream}
	if req.MaxTokens > 0 {
		body["max_tokens"] = req.MaxTokens
	}
	if req.Temperature != nil {
		body["temperature"] = *req.Temperature
	}
	if len(req.Stop) > 0 {
		body["stop"] = req.Stop
	}
	res, err := w.post(ctx, strings.TrimSuffix(w.t.BaseURL, "/")+"/fim/completions", body)
	if err != nil {
		return nil, err
	}
	s := &fimAnswer{close: res.Body.Close}
	usage := func(r gjson.Result) {
		if u := r.Get("usage"); u.Exists() {
			s.usage = llm.Usage{Input: int(u.Get("prompt_tokens").Int()), Output: int(u.Get("completion_tokens").Int())}
		}
		if f := r.Get("choices.0.finish_reason"); f.Type == gjson.String {
			s.stop = f.String()
		}
	}
	if isJSON(res) {
		s.next = whole(res.Body, func(data []byte) (string, bool, error) {
			if !gjson.ValidBytes(data) {
				return "", false, &json.SyntaxError{}
			}
			r := gjson.ParseBytes(data)
			usage(r)
			return r.Get("choices.0.message.content").String(), false, nil
		})
		return s, nil
	}
	s.next = sse(res.Body, func(data []byte) (string, bool, error) {
		if string(data) == "[DONE]" {
			return "", false, nil
		}
		if !gjson.ValidBytes(data) {
			return "", false, &llm.Error{Kind: llm.ErrMalformed, Message: "a stream event is not JSON: " + wire.Truncate(string(data), 100)}
		}
		r := gjson.ParseBytes(data)
		if e := r.Get("error"); e.Exists() {
			return "", false, &llm.Error{Kind: llm.ErrServer, Message: errorMessageFromBody(string(data))}
		}
		usage(r)
		return r.Get("choices.0.delta.content").String(), true, nil
	}, "the stream ended before [DONE]")
	return s, nil
}

// post sends a native FIM request (an absolute URL on the server) with
// the provider's key and headers; the client classifies an error status.
func (w *fimWire) post(ctx context.Context, url string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	client := wire.APIClient{Transport: *w.t}
	return client.DoURL(ctx, http.MethodPost, url, b, false)
}

func isJSON(res *http.Response) bool {
	t, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	return t == "application/json"
}

// once yields text, then the end.
func once(text string) func() (string, bool, error) {
	return func() (string, bool, error) { return text, false, nil }
}

// whole reads a JSON body at once.
func whole(body io.Reader, read func([]byte) (string, bool, error)) func() (string, bool, error) {
	return func() (string, bool, error) {
		b, err := io.ReadAll(body)
		if err != nil {
			return "", false, err
		}
		t, _, err := read(b)
		return t, false, err
	}
}

// lines reads NDJSON: one JSON object a line until read says the end.
func lines(body io.Reader, read func([]byte) (string, bool, error), missing string) func() (string, bool, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	return func() (string, bool, error) {
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			return read(line)
		}
		if err := sc.Err(); err != nil {
			return "", false, err
		}
		return "", false, &llm.Error{Kind: llm.ErrStreamCut, Message: missing}
	}
}

// sse reads the data of server-sent events until read says the end.
func sse(body io.Reader, read func([]byte) (string, bool, error), missing string) func() (string, bool, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	return func() (string, bool, error) {
		for sc.Scan() {
			line := sc.Bytes()
			data, ok := bytes.CutPrefix(line, []byte("data:"))
			if !ok {
				continue
			}
			return read(bytes.TrimSpace(data))
		}
		if err := sc.Err(); err != nil {
			return "", false, err
		}
		return "", false, &llm.Error{Kind: llm.ErrStreamCut, Message: missing}
	}
}
