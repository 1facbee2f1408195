package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// validate checks what every API would reject, so that the mistake is
// reported with darman's words before anything is sent.
func validate(req *Request) *Error {
	bad := func(format string, args ...any) *Error {
		return &Error{Kind: ErrBadRequest, Message: fmt.Sprintf(format, args...)}
	}
	if req == nil {
		return bad("no request (nil *llm.Request)")
	}
	if req.Model == "" {
		return bad("the request names no model")
	}
	if len(req.Messages) == 0 {
		return bad("the request has no messages")
	}
	if req.MaxOutputTokens < 0 {
		return bad("MaxOutputTokens is %d; use 0 for the model's maximum or a positive limit", req.MaxOutputTokens)
	}
	tools := map[string]bool{}
	for i, t := range req.Tools {
		if t.Name == "" {
			return bad("tool %d has no name", i)
		}
		if tools[t.Name] {
			return bad("two tools are named %q", t.Name)
		}
		tools[t.Name] = true
		if t.Schema != nil && !isJSONObject(t.Schema) {
			return bad("tool %q: its schema is not a JSON object", t.Name)
		}
	}
	calls := map[string]bool{}
	for i, m := range req.Messages {
		for j, p := range m.Parts {
			where := fmt.Sprintf("message %d (%s), part %d", i, m.Role, j)
			if err := validatePart(m.Role, p, calls); err != "" {
				return bad("%s: %s", where, err)
			}
		}
		switch m.Role {
		case RoleUser, RoleAssistant, RoleTool:
		default:
			return bad("message %d has role %q; use user, assistant or tool", i, m.Role)
		}
	}
	return nil
}

func validatePart(role Role, p Part, calls map[string]bool) string {
	switch p := p.(type) {
	case Text:
		if role == RoleTool {
			return "a tool message holds only tool results"
		}
	case Image:
		if role != RoleUser {
			return "images belong in user messages or tool results"
		}
		if msg := validateImage(p); msg != "" {
			return msg
		}
	case Reasoning:
		if role != RoleAssistant {
			return "reasoning belongs in assistant messages"
		}
	case ToolCall:
		if role != RoleAssistant {
			return "tool calls belong in assistant messages"
		}
		if p.ID == "" || p.Name == "" {
			return "a tool call needs an ID and a name"
		}
		calls[p.ID] = true
	case ToolResult:
		if role != RoleTool {
			return "tool results belong in tool messages"
		}
		if !calls[p.CallID] {
			return fmt.Sprintf("the tool result for %q answers no earlier tool call", p.CallID)
		}
		for _, img := range p.Images {
			if msg := validateImage(img); msg != "" {
				return msg
			}
		}
	case nil:
		return "nil part"
	default:
		return fmt.Sprintf("unknown part type %T", p)
	}
	return ""
}

func validateImage(img Image) string {
	switch img.MediaType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return fmt.Sprintf("image media type %q; use image/png, image/jpeg, image/gif or image/webp", img.MediaType)
	}
	if len(img.Data) == 0 {
		return "empty image"
	}
	return ""
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// ToolArguments makes a tool call's accumulated argument text into the
// JSON object of EventToolCallEnd, keeping the model's bytes as they are
// (whitespace included): empty becomes {}, anything that is not an object
// is returned as is with an error.
func ToolArguments(name string, raw []byte) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return json.RawMessage("{}"), nil
	}
	out := json.RawMessage(bytes.Clone(raw))
	if !isJSONObject(trimmed) {
		return out, fmt.Errorf("the model called %s with arguments that are not a JSON object: %.200s", name, trimmed)
	}
	return out, nil
}
