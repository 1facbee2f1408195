package llm

import (
	"fmt"
	"time"
)

// EventKind says what an [Event] carries.
type EventKind uint8

const (
	// EventTextDelta: Text is the next piece of a text part.
	EventTextDelta EventKind = iota + 1
	// EventReasoningDelta: Text is the next piece of a reasoning part.
	EventReasoningDelta
	// EventReasoningEnd: Reasoning is the complete part, with the signature
	// or encrypted content to send back on the next call.
	EventReasoningEnd
	// EventToolCallStart: ToolCall.ID and ToolCall.Name of a new call.
	EventToolCallStart
	// EventToolCallDelta: Text is the next fragment of the call's
	// arguments; ToolCall.ID says which call.
	EventToolCallDelta
	// EventToolCallEnd: ToolCall is complete, Arguments a JSON object. When
	// the model produced arguments that are not a JSON object, Err says so
	// and Arguments holds them as received.
	EventToolCallEnd
	// EventUsage: Usage and Cost of the call, once, before EventFinish.
	EventUsage
	// EventFinish: Finish says why the model stopped. It is the last event.
	EventFinish
	// EventRetry: the call failed before any output and is tried again;
	// Retry says when and why.
	EventRetry
)

var eventKindNames = [...]string{
	EventTextDelta:      "text",
	EventReasoningDelta: "reasoning",
	EventReasoningEnd:   "reasoning-end",
	EventToolCallStart:  "tool-call-start",
	EventToolCallDelta:  "tool-call-delta",
	EventToolCallEnd:    "tool-call-end",
	EventUsage:          "usage",
	EventFinish:         "finish",
	EventRetry:          "retry",
}

func (k EventKind) String() string {
	if int(k) < len(eventKindNames) && eventKindNames[k] != "" {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is one step of a streamed answer. Which fields are set depends on
// Kind; the others are zero.
type Event struct {
	Kind EventKind
	// Index is the position, counting from 0, of the assistant message part
	// the event belongs to (content events only).
	Index     int
	Text      string
	ToolCall  ToolCall
	Reasoning Reasoning
	Usage     Usage
	// Cost is the call's price in US dollars, from Usage and the model
	// catalog; zero when the model's prices are unknown.
	Cost   float64
	Finish FinishReason
	Retry  Retry
	// Err is set on an EventToolCallEnd whose arguments are not a JSON
	// object. It does not end the stream.
	Err error
}

// Usage counts the tokens of one call. Input counts only the input tokens
// that were neither read from nor written to the cache, so the four input
// and output counts add up to what is billed.
type Usage struct {
	Input      int
	Output     int
	CacheRead  int
	CacheWrite int
	// Reasoning is the part of Output spent thinking, when the API says.
	Reasoning int
}

// ContextTokens is how much of the model's context window the request
// filled.
func (u Usage) ContextTokens() int { return u.Input + u.CacheRead + u.CacheWrite }

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		Input:      u.Input + o.Input,
		Output:     u.Output + o.Output,
		CacheRead:  u.CacheRead + o.CacheRead,
		CacheWrite: u.CacheWrite + o.CacheWrite,
		Reasoning:  u.Reasoning + o.Reasoning,
	}
}

// FinishReason says why the model stopped.
type FinishReason string

const (
	// FinishStop: the model ended its turn.
	FinishStop FinishReason = "stop"
	// FinishToolUse: the model waits for the results of its tool calls.
	FinishToolUse FinishReason = "tool_use"
	// FinishLength: the answer hit MaxOutputTokens.
	FinishLength FinishReason = "length"
	// FinishContextWindow: the conversation filled the context window.
	FinishContextWindow FinishReason = "context_window"
	// FinishRefusal: the model or a content filter refused.
	FinishRefusal FinishReason = "refusal"
	// FinishPause: the API paused a long turn; call again to continue.
	FinishPause FinishReason = "pause"
	// FinishOther: a reason darman does not know; the stream still ended
	// normally.
	FinishOther FinishReason = "other"
)

// Retry describes one retry of a failed call.
type Retry struct {
	// Attempt is the number of the attempt about to be made (2 for the
	// first retry).
	Attempt int
	// Delay is how long the stream waits before it.
	Delay time.Duration
	// Err is why the previous attempt failed.
	Err *Error
}

// String is the line a user sees: "retrying in 4 s: rate limited (429)".
func (r Retry) String() string {
	return fmt.Sprintf("retrying in %s: %s", HumanDuration(r.Delay), r.Err.Short())
}

// HumanDuration writes durations the way people say them: "4 s", "250 ms",
// "2 min".
func HumanDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		s := d.Seconds()
		if s == float64(int(s)) {
			return fmt.Sprintf("%d s", int(s))
		}
		return fmt.Sprintf("%.1f s", s)
	default:
		return fmt.Sprintf("%.0f min", d.Minutes())
	}
}
