package llmtest

import (
	"encoding/json"
	"fmt"
)

// conversation is what the server needs to know about a request to pick
// the answer.
type conversation struct {
	model        string
	stream       bool
	includeUsage bool
	firstUser    string
	// step is the number of assistant turns in the request.
	step int
	// size is the request's length in bytes, for estimated usage.
	size int
}

// content is a message content that is either a string or a list of parts.
type content struct {
	text  string
	parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
}

func (c *content) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &c.text)
	}
	if string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, &c.parts)
}

// firstText is the string, or the first text part.
func (c content) firstText() string {
	if c.text != "" {
		return c.text
	}
	for _, p := range c.parts {
		if p.Type == "text" || p.Type == "input_text" {
			return p.Text
		}
	}
	return ""
}

func parseConversation(api API, body []byte) (conversation, error) {
	var req struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role    string  `json:"role"`
			Content content `json:"content"`
		} `json:"messages"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return conversation{}, fmt.Errorf("the request body is not the JSON of a %s request: %v", api, err)
	}
	c := conversation{model: req.Model, stream: req.Stream, includeUsage: req.StreamOptions.IncludeUsage, size: len(body)}
	if api == APIResponses {
		return c, c.readInput(req.Input)
	}
	if len(req.Messages) == 0 {
		return c, fmt.Errorf("the request has no messages")
	}
	inAssistant := false
	for _, m := range req.Messages {
		if m.Role == "user" && c.firstUser == "" {
			c.firstUser = m.Content.firstText()
		}
		// Consecutive assistant messages are one turn; a tool or user
		// message ends it.
		if m.Role == "assistant" && !inAssistant {
			c.step++
		}
		inAssistant = m.Role == "assistant"
	}
	return c, nil
}

// readInput reads a Responses API input: a string, or a list of items in
// which the model's own items (assistant messages, reasoning, function
// calls) form the assistant turns.
func (c *conversation) readInput(raw json.RawMessage) error {
	if len(raw) == 0 {
		return fmt.Errorf("the request has no input")
	}
	if raw[0] == '"' {
		return json.Unmarshal(raw, &c.firstUser)
	}
	var items []struct {
		Type    string  `json:"type"`
		Role    string  `json:"role"`
		Content content `json:"content"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return fmt.Errorf("input is neither a string nor a list of items: %v", err)
	}
	inAssistant := false
	for _, it := range items {
		if it.Role == "user" && c.firstUser == "" {
			c.firstUser = it.Content.firstText()
		}
		own := it.Role == "assistant" || it.Type == "reasoning" || it.Type == "function_call"
		if own && !inAssistant {
			c.step++
		}
		inAssistant = own
	}
	return nil
}
