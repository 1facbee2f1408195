package llm

import "encoding/json"

// Request is one model call: the whole conversation so far, the tools the
// model may call and the limits of its answer. Adapters read it and never
// modify it.
type Request struct {
	// Model is the model id as the provider knows it ("claude-sonnet-4-5",
	// "gpt-5", "qwen3:8b"), without the "provider/" prefix of darman's config.
	Model string
	// System is the system prompt; empty means none.
	System string
	// Messages is the conversation, oldest first.
	Messages []Message
	// Tools are the tools the model may call; nil means none.
	Tools []Tool
	// MaxOutputTokens caps the answer. Zero means the model's maximum output
	// from the catalog (Anthropic requires a value; the OpenAI adapters then
	// leave the field out).
	MaxOutputTokens int
	// Temperature is the sampling temperature; nil leaves the provider's
	// default. It is not sent while extended thinking is on.
	Temperature *float64
	// Reasoning asks for extended thinking; the zero value asks for none.
	Reasoning ReasoningOptions
	// Cache controls prompt caching; the zero value caches.
	Cache CacheOptions
}

// ReasoningOptions asks a reasoning model to think before it answers.
type ReasoningOptions struct {
	// Effort is "low", "medium" or "high" (some models accept "minimal",
	// "xhigh" or "max"); empty means the provider's default. Anthropic models
	// with budget-based thinking get a budget derived from it.
	Effort string
	// BudgetTokens is Anthropic's thinking budget; zero derives it from
	// Effort. It is raised to the API's minimum of 1024.
	BudgetTokens int
}

// Enabled reports whether the caller asked for reasoning at all.
func (r ReasoningOptions) Enabled() bool { return r.Effort != "" || r.BudgetTokens > 0 }

// CacheOptions controls prompt caching.
type CacheOptions struct {
	// Disabled sends no cache markers.
	Disabled bool
	// LongTTL asks Anthropic for a one-hour cache instead of five minutes.
	LongTTL bool
	// Key groups requests that share a prefix (OpenAI's prompt_cache_key);
	// empty sends none.
	Key string
}

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the tool's input, an object schema.
	// Nil means a tool without parameters.
	Schema json.RawMessage
}

// Role says who wrote a message.
type Role string

const (
	// RoleUser messages hold Text and Image parts.
	RoleUser Role = "user"
	// RoleAssistant messages hold Text, Reasoning and ToolCall parts.
	RoleAssistant Role = "assistant"
	// RoleTool messages hold the ToolResult parts answering the previous
	// assistant message's tool calls.
	RoleTool Role = "tool"
)

// Message is one turn of the conversation.
type Message struct {
	Role  Role
	Parts []Part
}

// Part is one piece of a message: [Text], [Image], [Reasoning], [ToolCall]
// or [ToolResult].
type Part interface{ isPart() }

// Text is plain text.
type Text struct{ Text string }

// Image is an inline image.
type Image struct {
	// MediaType is "image/png", "image/jpeg", "image/gif" or "image/webp".
	MediaType string
	Data      []byte
}

// The origins of reasoning: the API that produced it, as [Client.API]
// names it.
const (
	OriginAnthropic = "anthropic"
	OriginResponses = "openai-responses"
	OriginChat      = "openai-chat"
)

// Reasoning is the model's thinking, kept so that it can be sent back on
// the next call. Only the API that produced it can read it back: adapters
// drop reasoning whose Origin is another API.
type Reasoning struct {
	// Origin is the API that produced it: "anthropic", "openai-responses"
	// or "openai-chat".
	Origin string
	// Text is the thinking (or its summary) as shown to the user.
	Text string
	// Signature is Anthropic's signature over the thinking.
	Signature string
	// Redacted is the encrypted content of an Anthropic redacted_thinking
	// block; Text is empty then.
	Redacted string
	// ItemID is the id of an OpenAI Responses reasoning item.
	ItemID string
	// Encrypted is the encrypted content of an OpenAI Responses reasoning
	// item, which carries the reasoning across stateless turns.
	Encrypted string
	// Details is OpenRouter's reasoning_details array for this reasoning,
	// as JSON: the entries the stream delivered, their fragments joined,
	// each signature kept. It goes back byte for byte on the next call, as
	// OpenRouter asks, so the provider behind it can continue the
	// reasoning. Empty for every other server.
	Details string
}

// ToolCall is the model asking to run a tool.
type ToolCall struct {
	// ID links the call to its ToolResult.
	ID   string
	Name string
	// Arguments is the input as a JSON object, byte for byte as the model
	// wrote it: the adapters send these bytes back unchanged (prompt caches
	// key on them), so keep them as they are.
	Arguments json.RawMessage
	// Extra is what the server sent with the call for it to come back
	// with, as JSON: Gemini's extra_content, which holds its thought
	// signature. Empty for other servers.
	Extra string
}

// ToolResult answers a ToolCall.
type ToolResult struct {
	// CallID is the ToolCall's ID.
	CallID string
	// Name is the tool's name; some APIs want it beside the id.
	Name    string
	Text    string
	Images  []Image
	IsError bool
}

func (Text) isPart()       {}
func (Image) isPart()      {}
func (Reasoning) isPart()  {}
func (ToolCall) isPart()   {}
func (ToolResult) isPart() {}

// UserText is a user message with one text part.
func UserText(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{Text{Text: text}}}
}
