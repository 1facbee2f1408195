package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// FIMAPI names a fill-in-the-middle wire format: how a code completion
// (the text between a prefix and a suffix) is asked of a server.
type FIMAPI string

const (
	// FIMCompletions is OpenAI's legacy POST {baseURL}/completions with
	// "suffix" (DeepSeek's beta endpoint, Ollama, llama.cpp, LM Studio; a
	// server that ignores the suffix needs a Template).
	FIMCompletions FIMAPI = "completions"
	// FIMOllama is Ollama's native POST /api/generate with "suffix" (or a
	// raw templated prompt), answered in NDJSON.
	FIMOllama FIMAPI = "ollama"
	// FIMInfill is llama.cpp's POST /infill (input_prefix, input_suffix,
	// input_extra); with a Template, POST /completion with the raw prompt.
	FIMInfill FIMAPI = "infill"
	// FIMMistral is Mistral's POST {baseURL}/fim/completions (Codestral),
	// answered in Chat Completions' shape.
	FIMMistral FIMAPI = "fim"
)

// FIMAPIs are the FIM wire formats, for messages and checks.
var FIMAPIs = []FIMAPI{FIMCompletions, FIMOllama, FIMInfill, FIMMistral}

// FIMFile is a file given to the model as context besides the one being
// completed: another buffer's snippet, a definition.
type FIMFile struct {
	Path string
	Text string
}

// FIMRequest is one fill-in-the-middle call.
type FIMRequest struct {
	API   FIMAPI
	Model string
	// Prefix and Suffix are the text before and after the hole.
	Prefix, Suffix string
	// Files are context: llama.cpp's input_extra, the repo-level part of
	// a template, or else comments the caller put into Prefix.
	Files []FIMFile
	// Template, when set, puts Prefix, Suffix and Files into the model's
	// own FIM tokens and sends that as a raw prompt without a suffix, for
	// servers that do not do FIM themselves. FIMMistral ignores it.
	Template *FIMTemplate
	// MaxTokens caps the answer; zero leaves the server's default.
	MaxTokens int
	// Temperature is the sampling temperature; nil leaves the server's.
	Temperature *float64
	// Stop sequences end the answer (the template's are added).
	Stop []string
	// NoStream asks for one JSON answer instead of a stream.
	NoStream bool
}

// FIMStream is the answer of a FIM call, read piece by piece: for a
// {Next() { Text() }} loop. Close it, which ends the HTTP request at once
// when the answer is not all read.
type FIMStream struct {
	next  func() (string, bool, error)
	close func() error
	text  string
	err   error
	usage Usage
	done  bool
	// stop is the server's finish reason, when it said.
	stop string
}

// Next reads the next piece of text; false at the end or on an error.
func (s *FIMStream) Next() bool {
	for !s.done {
		t, more, err := s.next()
		if err != nil {
			s.err, s.done = err, true
			return false
		}
		if !more {
			s.done = true
		}
		if t != "" {
			s.text = t
			return true
		}
	}
	return false
}

// Text is the piece Next read.
func (s *FIMStream) Text() string { return s.text }

// Err is why the stream ended early, or nil.
func (s *FIMStream) Err() error { return s.err }

// Usage is what the server reported, once the stream ended; servers that
// report none leave it zero.
func (s *FIMStream) Usage() Usage { return s.usage }

// FinishReason is the server's reason for ending ("stop", "length"),
// once the stream ended; "" when it gave none.
func (s *FIMStream) FinishReason() string { return s.stop }

// Close ends the call, closing its connection if the answer was not all
// read.
func (s *FIMStream) Close() error {
	s.done = true
	if s.close == nil {
		return nil
	}
	c := s.close
	s.close = nil
	return c()
}

// FIM starts a fill-in-the-middle call on this provider's server. The
// cloud providers (Bedrock, Vertex) and Anthropic's API have no FIM; use
// a chat model for them.
func (c *Client) FIM(ctx context.Context, req *FIMRequest) (*FIMStream, error) {
	if c.fim == nil || c.typ == TypeAnthropic {
		return nil, &Error{Kind: ErrBadRequest, Provider: c.display, Model: req.Model,
			Message: "this provider has no fill-in-the-middle API; use a chat model for completions (completion.api \"chat\")"}
	}
	var s *FIMStream
	var err error
	switch req.API {
	case FIMCompletions, "":
		s, err = c.fimCompletions(ctx, req)
	case FIMOllama:
		s, err = c.fimOllama(ctx, req)
	case FIMInfill:
		s, err = c.fimInfill(ctx, req)
	case FIMMistral:
		s, err = c.fimMistral(ctx, req)
	default:
		return nil, &Error{Kind: ErrBadRequest, Provider: c.display, Model: req.Model,
			Message: fmt.Sprintf("unknown FIM API %q; use one of %v", req.API, FIMAPIs)}
	}
	if err != nil {
		return nil, c.fimError(ctx, req, err)
	}
	next := s.next
	s.next = func() (string, bool, error) {
		t, more, err := next()
		if err != nil {
			err = c.fimError(ctx, req, err)
		}
		return t, more, err
	}
	return s, nil
}

func (c *Client) fimError(ctx context.Context, req *FIMRequest, err error) error {
	base := Error{Provider: c.display, Model: req.Model, URL: c.baseURL, KeySource: c.keySource}
	if e := transportError(err, ctx, &base); e != nil {
		return e
	}
	e := &base
	e.Err = err
	var syn *json.SyntaxError
	switch {
	case classifyOpenAI(err, e):
	case errors.Is(err, io.ErrUnexpectedEOF):
		e.Kind = ErrStreamCut
	case errors.As(err, &syn):
		e.Kind = ErrMalformed
	default:
		e.Kind = ErrOther
	}
	return e
}

// prompt is what a templated request sends, and the stop sequences it
// adds.
func (req *FIMRequest) prompt() (string, []string) {
	stop := req.Stop
	if req.Template == nil {
		return req.Prefix, stop
	}
	return req.Template.Render(req.Prefix, req.Suffix, req.Files), append(slices(stop), req.Template.Stop...)
}

func slices(s []string) []string { return append([]string(nil), s...) }

// nativeBase is the server's root for native APIs (Ollama's /api,
// llama.cpp's /infill): the base URL without its OpenAI "/v1".
func (c *Client) nativeBase() string {
	return strings.TrimSuffix(strings.TrimSuffix(c.fim.baseURL, "/"), "/v1")
}

func (c *Client) fimCompletions(ctx context.Context, req *FIMRequest) (*FIMStream, error) {
	t := *c.fim
	if c.name == "deepseek" && !strings.HasSuffix(t.baseURL, "/beta") {
		// api-docs.deepseek.com: FIM is only on the beta endpoint.
		t.baseURL = strings.TrimSuffix(t.baseURL, "/v1") + "/beta"
	}
	prompt, stop := req.prompt()
	p := completionParams{Model: req.Model, Prompt: prompt, MaxTokens: req.MaxTokens, Temperature: req.Temperature}
	if req.Template == nil {
		p.Suffix = &req.Suffix
	}
	if len(stop) > 0 {
		p.Stop = capStop(stop, 4)
	}
	client := apiClient{t: t}
	if req.NoStream {
		body, err := encodeJSON(p)
		if err != nil {
			return nil, err
		}
		res, err := client.do(ctx, http.MethodPost, "completions", body, false)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return nil, err
		}
		s := &FIMStream{}
		text, _, err := s.completion(b)
		if err != nil {
			return nil, err
		}
		s.next = once(text)
		return s, nil
	}
	p.Stream = true
	p.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	body, err := encodeJSON(p)
	if err != nil {
		return nil, err
	}
	raw, err := client.do(ctx, http.MethodPost, "completions", body, true)
	if err != nil {
		return nil, err
	}
	s := &FIMStream{close: raw.Body.Close}
	if isJSON(raw) {
		// A server that ignores "stream": true.
		s.next = whole(raw.Body, s.completion)
		return s, nil
	}
	events := newSSEDecoder(raw.Body)
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
					return "", false, &Error{Kind: ErrStreamCut, Message: "the stream ended before its finish_reason"}
				}
				return "", false, nil
			}
			chunk, ok, bad := eventJSON(events.Event().Type, data)
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
func (s *FIMStream) chunk(r gjson.Result) (text, reason string) {
	if u := r.Get("usage"); u.IsObject() {
		in, out := int(u.Get("prompt_tokens").Int()), int(u.Get("completion_tokens").Int())
		if in > 0 || out > 0 {
			s.usage = Usage{Input: in, Output: out}
		}
	}
	c := r.Get("choices.0")
	return c.Get("text").String(), c.Get("finish_reason").String()
}

// completion reads a whole (not streamed) completion.
func (s *FIMStream) completion(b []byte) (string, bool, error) {
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

func (c *Client) fimOllama(ctx context.Context, req *FIMRequest) (*FIMStream, error) {
	prompt, stop := req.prompt()
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
	res, err := c.fimPost(ctx, c.nativeBase()+"/api/generate", body)
	if err != nil {
		return nil, err
	}
	s := &FIMStream{close: res.Body.Close}
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
			return "", false, &Error{Kind: ErrServer, Message: m.Error}
		}
		if m.Done {
			s.usage, s.stop = Usage{Input: m.PromptEvalCount, Output: m.EvalCount}, m.DoneReason
		}
		return m.Response, !m.Done, nil
	}
	s.next = lines(res.Body, read, "Ollama's answer ended before done:true")
	return s, nil
}

func (c *Client) fimInfill(ctx context.Context, req *FIMRequest) (*FIMStream, error) {
	prompt, stop := req.prompt()
	body := map[string]any{"stream": !req.NoStream, "cache_prompt": true}
	if req.Model != "" {
		body["model"] = req.Model
	}
	url := c.nativeBase() + "/infill"
	if req.Template == nil {
		body["input_prefix"], body["input_suffix"] = req.Prefix, req.Suffix
		extra := make([]map[string]string, 0, len(req.Files))
		for _, f := range req.Files {
			extra = append(extra, map[string]string{"filename": f.Path, "text": f.Text})
		}
		body["input_extra"] = extra
	} else {
		url = c.nativeBase() + "/completion"
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
	res, err := c.fimPost(ctx, url, body)
	if err != nil {
		return nil, err
	}
	s := &FIMStream{close: res.Body.Close}
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
			return "", false, &Error{Kind: ErrServer, Message: errorMessageFromBody(string(data))}
		}
		if m.Stop {
			s.usage, s.stop = Usage{Input: m.TokensEvaluated, Output: m.TokensPredicted}, m.StopType
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

func (c *Client) fimMistral(ctx context.Context, req *FIMRequest) (*FIMStream, error) {
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
	res, err := c.fimPost(ctx, strings.TrimSuffix(c.fim.baseURL, "/")+"/fim/completions", body)
	if err != nil {
		return nil, err
	}
	s := &FIMStream{close: res.Body.Close}
	usage := func(r gjson.Result) {
		if u := r.Get("usage"); u.Exists() {
			s.usage = Usage{Input: int(u.Get("prompt_tokens").Int()), Output: int(u.Get("completion_tokens").Int())}
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
			return "", false, &Error{Kind: ErrMalformed, Message: "a stream event is not JSON: " + truncate(string(data), 100)}
		}
		r := gjson.ParseBytes(data)
		if e := r.Get("error"); e.Exists() {
			return "", false, &Error{Kind: ErrServer, Message: errorMessageFromBody(string(data))}
		}
		usage(r)
		return r.Get("choices.0.delta.content").String(), true, nil
	}, "the stream ended before [DONE]")
	return s, nil
}

// fimPost sends a native FIM request (an absolute URL on the server) with
// the provider's key and headers; fimError classifies an error status.
func (c *Client) fimPost(ctx context.Context, url string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	client := apiClient{t: *c.fim}
	return client.doURL(ctx, http.MethodPost, url, b, false)
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
		return "", false, &Error{Kind: ErrStreamCut, Message: missing}
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
		return "", false, &Error{Kind: ErrStreamCut, Message: missing}
	}
}
