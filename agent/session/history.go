package session

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
)

// reasoningMeta is what a reasoning part keeps, besides its text, to send
// the model's thinking back on the next call.
type reasoningMeta struct {
	Origin    string `json:"origin,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
	ItemID    string `json:"itemId,omitempty"`
	Encrypted string `json:"encrypted,omitempty"`
	// Details is OpenRouter's reasoning_details, kept as a string so that
	// it goes back byte for byte.
	Details string `json:"details,omitempty"`
}

// history turns stored messages into the conversation the model is sent.
// Tool calls that never finished (the turn was cancelled, or darman died)
// are answered with an error result, since every API wants an answer to
// each call.
func history(msgs []agent.MessageWithParts) []llm.Message {
	var out []llm.Message
	for _, m := range msgs {
		switch m.Message.Role {
		case agent.RoleUser:
			var parts []llm.Part
			for _, p := range m.Parts {
				switch {
				case p.Kind == agent.PartText:
					parts = append(parts, llm.Text{Text: p.Text})
				case p.Kind == agent.PartCompaction && !cleared(p):
					parts = append(parts, llm.Text{Text: compactionText(p)})
				case p.Kind == agent.PartFile && p.File != nil && strings.HasPrefix(p.File.MIME, "image/") && len(p.File.Data) > 0:
					parts = append(parts, llm.Image{MediaType: p.File.MIME, Data: p.File.Data})
				}
			}
			if len(parts) > 0 {
				out = append(out, llm.Message{Role: llm.RoleUser, Parts: parts})
			}
		case agent.RoleAssistant:
			var parts, results []llm.Part
			for _, p := range m.Parts {
				switch p.Kind {
				case agent.PartText:
					if p.Text != "" {
						parts = append(parts, llm.Text{Text: p.Text})
					}
				case agent.PartReasoning:
					var meta reasoningMeta
					json.Unmarshal(p.Metadata, &meta)
					parts = append(parts, llm.Reasoning{Origin: meta.Origin, Text: p.Text, Signature: p.Signature,
						Redacted: meta.Redacted, ItemID: meta.ItemID, Encrypted: meta.Encrypted, Details: meta.Details})
				case agent.PartTool:
					if p.Tool == nil {
						continue
					}
					parts = append(parts, llm.ToolCall{ID: p.Tool.CallID, Name: p.Tool.Name, Arguments: argsOf(p.Tool), Extra: p.Tool.Extra})
					results = append(results, resultOf(p.Tool))
				}
			}
			if len(parts) > 0 {
				out = append(out, llm.Message{Role: llm.RoleAssistant, Parts: parts})
			}
			if len(results) > 0 {
				out = append(out, llm.Message{Role: llm.RoleTool, Parts: results})
			}
		}
	}
	return out
}

// argsOf is a call's arguments as the model wrote them: RawInput when the
// store kept it, else Input.
func argsOf(t *agent.ToolCall) json.RawMessage {
	if t.RawInput != "" && json.Valid([]byte(t.RawInput)) {
		return json.RawMessage(t.RawInput)
	}
	return argsOrEmpty(t.Input)
}

// rawInput is what ToolCall.RawInput keeps of a call's arguments: their
// bytes when the store's JSON encoding would change them, else nothing.
func rawInput(args json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil || bytes.Equal(b.Bytes(), args) {
		return ""
	}
	return string(args)
}

func argsOrEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return json.RawMessage(`{}`)
	}
	return raw
}

func resultOf(t *agent.ToolCall) llm.ToolResult {
	r := llm.ToolResult{CallID: t.CallID, Name: t.Name}
	switch t.Status {
	case agent.ToolCompleted:
		r.Text = t.Output
	case agent.ToolFailed:
		r.Text, r.IsError = t.Error, true
		if r.Text == "" {
			r.Text = t.Output
		}
	default:
		r.Text, r.IsError = "The call was interrupted before it finished; it may or may not have had an effect.", true
	}
	for _, a := range t.Attachments {
		if strings.HasPrefix(a.MIME, "image/") && len(a.Data) > 0 {
			r.Images = append(r.Images, llm.Image{MediaType: a.MIME, Data: a.Data})
		}
	}
	return r
}
