package llm

import (
	"encoding/base64"
	"encoding/json"
)

// anthropicCase is one request to a Messages server, with the settings
// and environment of its client.
type anthropicCase struct {
	name     string
	settings Settings
	env      map[string]string
	req      func() *Request
}

// anthropicRichRequest has every kind of part darman sends to Messages: a
// system prompt, text and images from the user, Anthropic's own thinking
// (signed, redacted, and unsigned, which is not sent) beside other APIs'
// reasoning (not sent), text (blank text is not sent), tool calls with
// arguments, without, with arguments that are not compact and that are
// not JSON, tool results with text, an error, images and only an image,
// and text with HTML characters.
func anthropicRichRequest() *Request {
	temp := 0.0
	// A 1x1 PNG and a 1x1 GIF: images are checked before they are sent.
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	gif, _ := base64.StdEncoding.DecodeString("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
	img := Image{MediaType: "image/png", Data: png}
	img2 := Image{MediaType: "image/gif", Data: gif}
	return &Request{Model: "m", System: "be <brief> & exact", MaxOutputTokens: 100, Temperature: &temp,
		Reasoning: ReasoningOptions{Effort: "high"}, Cache: CacheOptions{Key: "k"},
		Tools: []Tool{
			{Name: "read", Description: "reads <files> & more", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "noargs"},
		},
		Messages: []Message{
			{Role: RoleUser, Parts: []Part{Text{Text: "look"}, img}},
			{Role: RoleUser, Parts: []Part{Text{Text: ""}}},
			{Role: RoleAssistant, Parts: []Part{
				Reasoning{Origin: OriginResponses, ItemID: "rs_1", Text: "thought", Encrypted: "enc"},
				Reasoning{Origin: OriginChat, Text: "x"},
				Reasoning{Origin: OriginAnthropic, Text: "so <b> & c", Signature: "sig=="},
				Reasoning{Origin: OriginAnthropic, Redacted: "opaque=="},
				Reasoning{Origin: OriginAnthropic, Text: "unsigned, dropped"},
				Text{Text: "ok"},
				ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)},
				ToolCall{ID: "c2", Name: "noargs"},
			}},
			{Role: RoleTool, Parts: []Part{
				ToolResult{CallID: "c1", Text: "content"},
				ToolResult{CallID: "c2", Text: "bad", IsError: true, Images: []Image{img}},
			}},
			{Role: RoleAssistant, Parts: []Part{
				Text{Text: "  \n"},
				Text{Text: "calling <tools> & more"},
				ToolCall{ID: "c4", Name: "read", Arguments: json.RawMessage(`{"path": "b",  "n": 1}`)},
				ToolCall{ID: "c5", Name: "read", Arguments: json.RawMessage(`{bad`)},
			}},
			{Role: RoleTool, Parts: []Part{
				ToolResult{CallID: "c4", Images: []Image{img2}},
				ToolResult{CallID: "c5", Text: "invalid arguments", IsError: true},
			}},
			{Role: RoleAssistant, Parts: []Part{Text{Text: "done"}}},
			{Role: RoleUser, Parts: []Part{img, Text{Text: "go on"}}},
		}}
}

func anthropicCases() []anthropicCase {
	withModel := func(model string, edit func(*Request)) func() *Request {
		return func() *Request {
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
			req: withModel("claude-opus-4-6", func(r *Request) { r.Cache.LongTTL = true })},
		{name: "plain", settings: Settings{Name: "anthropic", APIKey: "sk-ant-test"},
			req: withModel("claude-opus-4-6", func(r *Request) {
				t := 0.5
				r.Temperature, r.Reasoning, r.Cache.Disabled, r.MaxOutputTokens = &t, ReasoningOptions{}, true, 0
			})},
		{name: "unknown-model", settings: Settings{Name: "anthropic", APIKey: "sk-ant-test"},
			req: withModel("my-claude", func(r *Request) { r.Reasoning = ReasoningOptions{BudgetTokens: 10} })},
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
