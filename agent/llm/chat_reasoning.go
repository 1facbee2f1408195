package llm

import (
	"fmt"
)

// Chat Completions has no field for reasoning in the requests OpenAI
// documents, and each server that streams it asks for it back its own way.
// A ReasoningReturn says what darman sends back; presets carry each
// server's documented rule, and a model's configuration can replace it.

// The fields reasoning travels back in ([ReasoningReturn.Field]).
const (
	// ReturnNone sends no reasoning back.
	ReturnNone = "none"
	// ReturnReasoningContent sends the text as the assistant message's
	// reasoning_content (DeepSeek, GLM, Kimi, llama.cpp).
	ReturnReasoningContent = "reasoning_content"
	// ReturnReasoning sends the text as the message's reasoning
	// (OpenRouter's convention, which gpt-oss adopts).
	ReturnReasoning = "reasoning"
	// ReturnReasoningDetails sends OpenRouter's reasoning_details array as
	// it came, and no text.
	ReturnReasoningDetails = "reasoning_details"
)

// The assistant messages reasoning is sent back with ([ReasoningReturn.Turns]).
const (
	// TurnsAll: every assistant message that had reasoning.
	TurnsAll = "all"
	// TurnsToolCalls: every assistant message with tool calls, in every
	// later request; its reasoning is sent even when empty (DeepSeek
	// answers 400 to a tool-call message without reasoning_content).
	TurnsToolCalls = "tool-calls"
	// TurnsCurrent: the assistant messages after the last user message,
	// the tool-call loop in progress (gpt-oss's harmony rule: reasoning is
	// dropped once a final answer was given).
	TurnsCurrent = "current"
)

// ReasoningReturn says what a Chat Completions request carries of the
// reasoning of earlier answers. The zero value sends nothing.
type ReasoningReturn struct {
	// Field is ReturnNone, ReturnReasoningContent, ReturnReasoning or
	// ReturnReasoningDetails; empty means ReturnNone.
	Field string
	// Turns is TurnsAll, TurnsToolCalls or TurnsCurrent; empty means
	// TurnsAll.
	Turns string
}

// String is the rule as doctor and the docs write it:
// "reasoning_content on tool-call turns".
func (r ReasoningReturn) String() string {
	switch r.Field {
	case "", ReturnNone:
		return "not sent back"
	case ReturnReasoningDetails:
		return "reasoning_details sent back unchanged"
	}
	switch r.Turns {
	case TurnsToolCalls:
		return r.Field + " sent back with tool-call turns"
	case TurnsCurrent:
		return r.Field + " sent back within the current tool loop"
	}
	return r.Field + " sent back with every turn"
}

// Validate says what is wrong with a rule from the configuration.
func (r ReasoningReturn) Validate() error {
	switch r.Field {
	case "", ReturnNone, ReturnReasoningContent, ReturnReasoning, ReturnReasoningDetails:
	default:
		return fmt.Errorf("reasoningReturn field %q: use %s, %s, %s or %s",
			r.Field, ReturnNone, ReturnReasoningContent, ReturnReasoning, ReturnReasoningDetails)
	}
	switch r.Turns {
	case "", TurnsAll, TurnsToolCalls, TurnsCurrent:
	default:
		return fmt.Errorf("reasoningReturn turns %q: use %s, %s or %s", r.Turns, TurnsAll, TurnsToolCalls, TurnsCurrent)
	}
	return nil
}
