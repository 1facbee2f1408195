package llmtest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// Script says how the server answers. Every field can be written in JSON
// (see [ParseScript]) except Reply.
type Script struct {
	// Steps answer conversations that no entry of Conversations matches:
	// the k-th model call of a conversation (k counted from 0: the number
	// of assistant turns in the request) gets Steps[k].
	Steps []Step `json:"steps,omitempty"`
	// Conversations script conversations apart, chosen by their first user
	// message. The first match wins.
	Conversations []Conversation `json:"conversations,omitempty"`
	// Models is what GET /v1/models lists; empty lists "scripted-model".
	Models []string `json:"models,omitempty"`
	// Reply, when set, chooses every answer instead of the steps. It runs
	// on the server's goroutines and may be called concurrently.
	Reply func(c *Call) Step `json:"-"`
}

// Conversation is the script of the conversations whose first user message
// contains Match.
type Conversation struct {
	Match string `json:"match"`
	Steps []Step `json:"steps"`
}

// Step is one answer of the model.
type Step struct {
	// Reasoning is streamed first, as thinking (Anthropic), a reasoning
	// summary (Responses) or reasoning_content (Chat Completions).
	Reasoning string `json:"reasoning,omitempty"`
	// Signature is the thinking block's signature (Anthropic) or the
	// reasoning item's encrypted content (Responses); empty means a
	// generated one.
	Signature string `json:"signature,omitempty"`
	// Text is the answer's text.
	Text string `json:"text,omitempty"`
	// Chunks splits Text and Reasoning into this many pieces; zero splits
	// them into words.
	Chunks int `json:"chunks,omitempty"`
	// TextChunks gives the text's pieces explicitly, overriding Text.
	TextChunks []string `json:"textChunks,omitempty"`
	// ToolCalls are the tools the model calls, after the text.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Interleave streams the argument fragments of several tool calls in
	// alternation (Chat Completions only; the other APIs stream blocks one
	// after the other).
	Interleave bool `json:"interleave,omitempty"`
	// Usage is the usage reported; nil means an estimate: input from the
	// request's size, output from the number of chunks.
	Usage *Usage `json:"usage,omitempty"`
	// Stop overrides the stop reason in the API's own words ("max_tokens",
	// "length", "incomplete"...).
	Stop string `json:"stop,omitempty"`
	// Events, when set, are streamed instead of everything above, each as
	// one event exactly as written: fixtures copied from a server's
	// documentation. For Chat Completions each is the data of a chunk (end
	// with "[DONE]" as servers do); for Anthropic each is an event's JSON,
	// named by its "type".
	Events []string `json:"events,omitempty"`
	// Delay is the pause before each streamed event; zero streams as fast
	// as the connection takes it.
	Delay Duration `json:"delay,omitempty"`
	// Faults break the attempts at this step, in order: the first fault
	// hits the first Times attempts, the next the following ones; attempts
	// past them all get the answer.
	Faults []Fault `json:"faults,omitempty"`
}

// ToolCall is a tool call in a scripted answer.
type ToolCall struct {
	// ID is the call's id; empty means a generated one.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is the input, a JSON object; empty means {}.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Chunks splits the arguments into this many fragments; zero means 3.
	Chunks int `json:"chunks,omitempty"`
}

// Usage is the token usage a step reports, in the API's own terms: for
// Chat Completions and Responses, Input includes the cached tokens.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty"`
	Reasoning  int `json:"reasoning,omitempty"`
}

// FaultKind is how a fault breaks an attempt.
type FaultKind string

const (
	// FaultStatus answers with Status and an error body in the API's
	// format, with retry-after headers when set.
	FaultStatus FaultKind = "status"
	// FaultCut streams After events, then drops the connection.
	FaultCut FaultKind = "cut"
	// FaultStall streams After events, then sends nothing until the client
	// gives up.
	FaultStall FaultKind = "stall"
	// FaultMalformed streams After events, then one whose data is not JSON.
	FaultMalformed FaultKind = "malformed"
	// FaultErrorEvent streams After events, then the API's error event
	// (Anthropic's "error" event, an {"error":...} chunk, a Responses
	// "error" event) with Type and Message.
	FaultErrorEvent FaultKind = "error"
	// FaultNoStream answers a streaming request with the non-streamed
	// JSON, as servers that ignore "stream": true do.
	FaultNoStream FaultKind = "nostream"
)

// Fault breaks one or more attempts at a step.
type Fault struct {
	Kind FaultKind `json:"kind"`
	// After is how many SSE events are sent before the fault strikes.
	After int `json:"after,omitempty"`
	// Status is the HTTP status of a FaultStatus: 429, 500, 529...
	Status int `json:"status,omitempty"`
	// Type is the API's error type (Anthropic: "overloaded_error") or code
	// (OpenAI: "context_length_exceeded"); empty means the usual one for
	// the status.
	Type string `json:"type,omitempty"`
	// Message is the error's message; empty means a generic one.
	Message string `json:"message,omitempty"`
	// RetryAfter and RetryAfterMs are sent as the retry-after and
	// retry-after-ms headers of a FaultStatus.
	RetryAfter   string `json:"retryAfter,omitempty"`
	RetryAfterMs string `json:"retryAfterMs,omitempty"`
	// Times is how many attempts the fault breaks: zero means 1, negative
	// means every attempt from here on.
	Times int `json:"times,omitempty"`
}

// Duration is a time.Duration that reads and writes as "250ms" in JSON.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var ns int64
		if err2 := json.Unmarshal(b, &ns); err2 != nil {
			return fmt.Errorf("a duration is a string such as \"250ms\": %w", err)
		}
		*d = Duration(ns)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// ParseScript reads a script written in JSON, refusing unknown fields so
// that a typo does not silently change a test.
func ParseScript(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("llmtest: script: %w", err)
	}
	return s, s.validate()
}

// LoadScript reads a JSON script file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("llmtest: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return Script{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (s Script) validate() error {
	check := func(where string, steps []Step) error {
		for i, st := range steps {
			for j, tc := range st.ToolCalls {
				if tc.Name == "" {
					return fmt.Errorf("llmtest: script: %s step %d: tool call %d has no name", where, i, j)
				}
				if len(tc.Arguments) > 0 && !json.Valid(tc.Arguments) {
					return fmt.Errorf("llmtest: script: %s step %d: tool call %q: arguments are not JSON", where, i, tc.Name)
				}
			}
			for j, f := range st.Faults {
				switch f.Kind {
				case FaultStatus:
					if f.Status < 400 || f.Status > 599 {
						return fmt.Errorf("llmtest: script: %s step %d: fault %d: status %d is not an error status", where, i, j, f.Status)
					}
				case FaultCut, FaultStall, FaultMalformed, FaultErrorEvent, FaultNoStream:
				default:
					return fmt.Errorf("llmtest: script: %s step %d: fault %d: unknown kind %q (status, cut, stall, malformed, error, nostream)", where, i, j, f.Kind)
				}
			}
		}
		return nil
	}
	if err := check("steps:", s.Steps); err != nil {
		return err
	}
	for _, c := range s.Conversations {
		if err := check(fmt.Sprintf("conversation %q:", c.Match), c.Steps); err != nil {
			return err
		}
	}
	return nil
}

// steps finds the steps for a conversation.
func (s Script) steps(firstUser string) []Step {
	for _, c := range s.Conversations {
		if strings.Contains(firstUser, c.Match) {
			return c.Steps
		}
	}
	return s.Steps
}

// fault is the fault for the attempt-th attempt (from 0) at a step.
func (st Step) fault(attempt int) *Fault {
	n := 0
	for i := range st.Faults {
		f := &st.Faults[i]
		if f.Times < 0 {
			return f
		}
		n += max(f.Times, 1)
		if attempt < n {
			return f
		}
	}
	return nil
}

// textChunks is the step's text split as the stream sends it.
func (st Step) textChunks() []string {
	if st.TextChunks != nil {
		return st.TextChunks
	}
	return split(st.Text, st.Chunks)
}

// split cuts s into n pieces of about equal size on rune boundaries, or
// into words (each keeping its trailing space) when n is zero.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 {
		var out []string
		for len(s) > 0 {
			i := strings.IndexByte(s, ' ')
			if i < 0 {
				out = append(out, s)
				break
			}
			out = append(out, s[:i+1])
			s = s[i+1:]
		}
		return out
	}
	if n > len(s) {
		n = len(s)
	}
	out := make([]string, 0, n)
	size := len(s) / n
	for len(out) < n-1 && len(s) > size {
		i := size
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return append(out, s)
}
