package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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

// FIMWire speaks a provider's fill-in-the-middle APIs (agent/llm/openai).
// Its methods may be called from several goroutines at once.
type FIMWire interface {
	// FIM sends the request, whose API is one of [FIMAPIs] or empty
	// (FIMCompletions), and returns its answer.
	FIM(ctx context.Context, req *FIMRequest) (FIMSource, error)
	// Classify fills in e from an error status of the server and reports
	// whether it recognised it.
	Classify(err error, e *Error) bool
}

// FIMSource is one fill-in-the-middle answer as the wire reads it. It
// belongs to the goroutine of its [FIMStream].
type FIMSource interface {
	// Next reads the next piece of text (possibly empty); more is false
	// at the end of the answer.
	Next() (text string, more bool, err error)
	// End is the usage and the finish reason the server reported so far.
	End() (Usage, string)
	// Close ends the call.
	Close() error
}

// FIMStream is the answer of a FIM call, read piece by piece: for a
// {Next() { Text() }} loop. Close it, which ends the HTTP request at once
// when the answer is not all read.
type FIMStream struct {
	client *Client
	ctx    context.Context
	req    *FIMRequest
	src    FIMSource
	text   string
	err    error
	done   bool
	closed bool
}

// Next reads the next piece of text; false at the end or on an error.
func (s *FIMStream) Next() bool {
	for !s.done {
		t, more, err := s.src.Next()
		if err != nil {
			s.err, s.done = s.client.fimError(s.ctx, s.req, err), true
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
func (s *FIMStream) Usage() Usage {
	u, _ := s.src.End()
	return u
}

// FinishReason is the server's reason for ending ("stop", "length"),
// once the stream ended; "" when it gave none.
func (s *FIMStream) FinishReason() string {
	_, r := s.src.End()
	return r
}

// Close ends the call, closing its connection if the answer was not all
// read.
func (s *FIMStream) Close() error {
	s.done = true
	if s.closed {
		return nil
	}
	s.closed = true
	return s.src.Close()
}

// FIM starts a fill-in-the-middle call on this provider's server. The
// cloud providers (Bedrock, Vertex) and Anthropic's API have no FIM; use
// a chat model for them.
func (c *Client) FIM(ctx context.Context, req *FIMRequest) (*FIMStream, error) {
	if c.fim == nil || c.typ == TypeAnthropic {
		return nil, &Error{Kind: ErrBadRequest, Provider: c.display, Model: req.Model,
			Message: "this provider has no fill-in-the-middle API; use a chat model for completions (completion.api \"chat\")"}
	}
	if req.API != "" && !slices.Contains(FIMAPIs, req.API) {
		return nil, &Error{Kind: ErrBadRequest, Provider: c.display, Model: req.Model,
			Message: fmt.Sprintf("unknown FIM API %q; use one of %v", req.API, FIMAPIs)}
	}
	src, err := c.fim.FIM(ctx, req)
	if err != nil {
		return nil, c.fimError(ctx, req, err)
	}
	return &FIMStream{client: c, ctx: ctx, req: req, src: src}, nil
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
	case c.fim.Classify(err, e):
	case errors.Is(err, io.ErrUnexpectedEOF):
		e.Kind = ErrStreamCut
	case errors.As(err, &syn):
		e.Kind = ErrMalformed
	default:
		e.Kind = ErrOther
	}
	return e
}
