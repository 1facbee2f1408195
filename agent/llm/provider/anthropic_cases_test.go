package provider

import (
	"encoding/base64"
	"encoding/json"

	"github.com/darman-dev/darman/agent/llm"
)

// anthropicCase is one request to a Messages server, with the settings
// and environment of its client.
type anthropicCase struct {
	name     string
	settings Settings
	env      map[string]string
	req      func() *llm.Request
}

// anthropicRichRequest has every kind of part darman sends to Messages: a
// system prompt, text and images from the user, Anthropic's own thinking
// (signed, redacted, and unsigned, which is not sent) beside other APIs'
// reasoning (not sent), text (blank text is not sent), tool calls with
// arguments, without, with arguments that are not compact and that are
// not JSON, tool results with text, an error, images and only an image,
// and text with HTML characters.
func anthropicRichRequest() *llm.Request {
	temp := 0.0
	// A 1x1 PNG and a 1x1 GIF: images are checked before they are sent.
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	gif, _ := base64.StdEncoding.DecodeString("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
	img := llm.Image{MediaType: "image/png", Data: png}
	img2 := llm.Image{MediaType: "image/gif", Data: gif}
	return &llm.Request{Model: "m", System: "be <brief> & exact", MaxOutputTokens: 100, Temperature: &temp,
		Reasoning: llm.ReasoningOptions{Effort: "high"}, Cache: llm.CacheOptions{Key: "k"},
		Tools: []llm.Tool{
			{Name: "read", Description: "reads <files> & more", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "noargs"},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{llm.Text{Text: "look"}, img}},
			{Role: llm.RoleUser, Parts: []llm.Part{llm.Text{Text: ""}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				llm.Reasoning{Origin: llm.OriginResponses, ItemID: "rs_1", Text: "thought", Encrypted: "enc"},
				llm.Reasoning{Origin: llm.OriginChat, Text: "x"},
				llm.Reasoning{Origin: llm.OriginAnthropic, Text: "so <b> & c", Signature: "sig=="},
				llm.Reasoning{Origin: llm.OriginAnthropic, Redacted: "opaque=="},
				llm.Reasoning{Origin: llm.OriginAnthropic, Text: "unsigned, dropped"},
				llm.Text{Text: "ok"},
				llm.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)},
				llm.ToolCall{ID: "c2", Name: "noargs"},
			}},
			{Role: llm.RoleTool, Parts: []llm.Part{
				llm.ToolResult{CallID: "c1", Text: "content"},
				llm.ToolResult{CallID: "c2", Text: "bad", IsError: true, Images: []llm.Image{img}},
			}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				llm.Text{Text: "  \n"},
				llm.Text{Text: "calling <tools> & more"},
				llm.ToolCall{ID: "c4", Name: "read", Arguments: json.RawMessage(`{"path": "b",  "n": 1}`)},
				llm.ToolCall{ID: "c5", Name: "read", Arguments: json.RawMessage(`{bad`)},
			}},
			{Role: llm.RoleTool, Parts: []llm.Part{
				llm.ToolResult{CallID: "c4", Images: []llm.Image{img2}},
				llm.ToolResult{CallID: "c5", Text: "invalid arguments", IsError: true},
			}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text{Text: "done"}}},
			{Role: llm.RoleUser, Parts: []llm.Part{img, llm.Text{Text: "go on"}}},
		}}
}

func anthropicCases() []anthropicCase {
	withModel := func(model string, edit func(*llm.Request)) func() *llm.Request {
		return func() *llm.Request {
			r := anthropicRichRequest()
			r.Model = model
			if edit != nil {
				edit(r)
			}
			return r
		}
	}
	return []anthropicCase{
		{name: "budget", settings: Settings{Name: "anthropic", APIKey: "sk-ant-test"},
			req: withModel("claude-sonnet-4-5", nil)},
		{name: "adaptive", settings: Settings{Name: "anthropic", APIKey: "sk-ant-test",
			Headers: map[string]string{"anthropic-beta": "context-1m-2025-08-07"}},
			req: withModel("claude-opus-4-6", func(r *llm.Request) { r.Cache.LongTTL = true })},
		{name: "plain", settings: Settings{Name: "anthropic", APIKey: "sk-ant-test"},
			req: withModel("claude-opus-4-6", func(r *llm.Request) {
				t := 0.5
				r.Temperature, r.Reasoning, r.Cache.Disabled, r.MaxOutputTokens = &t, llm.ReasoningOptions{}, true, 0
			})},
		{name: "unknown-model", settings: Settings{Name: "anthropic", APIKey: "sk-ant-test"},
			req: withModel("my-claude", func(r *llm.Request) { r.Reasoning = llm.ReasoningOptions{BudgetTokens: 10} })},
		{name: "bedrock-bearer", settings: Settings{Name: "bedrock", APIKey: "br-key", Region: "us-west-2",
			Headers: map[string]string{"anthropic-beta": "a-1, b-2"}},
			req: withModel("anthropic.claude-sonnet-4-5-20250929-v1:0", nil)},
		{name: "bedrock-sigv4", settings: Settings{Name: "bedrock", Region: "eu-west-1"},
			env: map[string]string{"AWS_ACCESS_KEY_ID": testAWSKeyID, "AWS_SECRET_ACCESS_KEY": testAWSSecret, "AWS_SESSION_TOKEN": testAWSSession},
			req: withModel("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", nil)},
		{name: "vertex", settings: Settings{Name: "vertex", APIKey: "ya29.token", Region: "us-east5", Project: "my-project"},
			req: withModel("claude-sonnet-4-5@20250929", nil)},
		// Configured headers: a version of the user's own, and headers the
		// clouds move into the body or drop.
		{name: "headers", settings: Settings{Name: "anthropic", APIKey: "sk-ant-test",
			Headers: map[string]string{"Anthropic-Version": "2023-06-01", "anthropic-beta": "x-1,y-2"}},
			req: withModel("claude-haiku-4-5", nil)},
		{name: "bedrock-headers", settings: Settings{Name: "bedrock", APIKey: "br-key", Region: "us-west-2",
			Headers: map[string]string{"anthropic-version": "bedrock-2023-05-31"}},
			req: withModel("anthropic.claude-haiku-4-5-20251001-v1:0", nil)},
		{name: "vertex-headers", settings: Settings{Name: "vertex", APIKey: "ya29.token", Region: "global", Project: "p",
			Headers: map[string]string{"anthropic-version": "2023-06-01", "X-Api-Key": "not-for-google"}},
			req: withModel("claude-haiku-4-5@20251001", nil)},
	}
}
