package lsp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent/permission"
)

// elicitParams are darman/elicit's params. The form goes as darman's flat
// fields, not as the MCP server's requestedSchema: the client maps each
// field to one prompt and needs no JSON Schema reader, and darman checks
// the answer against the same fields it sent.
type elicitParams struct {
	RequestID string                   `json:"requestId"`
	Server    string                   `json:"server"`
	Mode      string                   `json:"mode"`
	Message   string                   `json:"message"`
	Fields    []permission.ElicitField `json:"fields"`
	URL       string                   `json:"url,omitempty"`
}

// elicitResult is darman/elicit's answer.
type elicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// askElicit asks the client that opted in with darman/elicit, within
// Options.PermissionTimeout (a person answers). The answer's content is
// checked against the fields: a value of the wrong type, a choice not
// offered, a missing required field or a field not asked for declines the
// elicitation, with a log line and a message saying what was wrong (asking
// again would most likely get the same answer from the same client).
// No answer in time is "cancel"; ctx ending cancels the request
// ($/cancelRequest) and returns ctx's error. A MethodNotFound answer is
// returned as is, for Elicit to fall back.
func (g editorGate) askElicit(ctx context.Context, e permission.Elicitation) (permission.ElicitAnswer, error) {
	s := g.s
	p := elicitParams{RequestID: "elicit_" + strconv.FormatUint(s.questions.n.Add(1), 10),
		Server: e.Server, Mode: e.Mode, Message: e.Message, Fields: e.Fields, URL: e.URL}
	if p.Fields == nil {
		p.Fields = []permission.ElicitField{}
	}
	var res elicitResult
	pending, err := s.send(ctx, s.opts.PermissionTimeout, "darman/elicit", p)
	g.wrote()
	if err == nil {
		err = s.wait(pending, "darman/elicit", &res)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return permission.ElicitAnswer{}, ctx.Err()
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		s.log.Warn("lsp: no answer to darman/elicit in time; the MCP server is told cancel", "server", e.Server, "requestId", p.RequestID, "err", err)
		return permission.ElicitAnswer{Action: "cancel"}, nil
	case err != nil:
		return permission.ElicitAnswer{}, err
	}
	switch res.Action {
	case "decline", "cancel":
		return permission.ElicitAnswer{Action: res.Action}, nil
	case "accept":
	default:
		s.log.Warn("lsp: darman/elicit answered with an unknown action; declined", "server", e.Server, "requestId", p.RequestID, "action", res.Action)
		return permission.ElicitAnswer{Action: "decline"}, nil
	}
	if e.Mode == "url" {
		return permission.ElicitAnswer{Action: "accept"}, nil
	}
	content, err := checkElicitContent(e.Fields, res.Content)
	if err != nil {
		s.log.Warn("lsp: darman/elicit's answer does not fit the form; declined", "server", e.Server, "requestId", p.RequestID, "err", err)
		s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("darman declined the MCP server %s's question: the editor's answer %v.", e.Server, err))
		return permission.ElicitAnswer{Action: "decline"}, nil
	}
	return permission.ElicitAnswer{Action: "accept", Content: content}, nil
}

// checkElicitContent checks a form's answer against its fields and returns
// it without null values; the error says which field is wrong and how.
func checkElicitContent(fields []permission.ElicitField, content map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(content))
	byName := make(map[string]permission.ElicitField, len(fields))
	for _, f := range fields {
		byName[f.Name] = f
	}
	for name, v := range content {
		f, ok := byName[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("has the field %q, which the form does not ask for", name)
		case v == nil:
			continue
		}
		if err := checkElicitValue(f, v); err != nil {
			return nil, fmt.Errorf("gives the field %q %v", name, err)
		}
		out[name] = v
	}
	for _, f := range fields {
		if _, ok := out[f.Name]; f.Required && !ok {
			return nil, fmt.Errorf("leaves out the required field %q", f.Name)
		}
	}
	return out, nil
}

func checkElicitValue(f permission.ElicitField, v any) error {
	switch f.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s, not a string", jsonKind(v))
		}
		if len(f.Enum) > 0 && !slices.Contains(f.Enum, s) {
			return fmt.Errorf("%q, which is not one of %q", s, f.Enum)
		}
	case "number", "integer":
		n, ok := v.(float64)
		if !ok {
			return fmt.Errorf("%s, not a %s", jsonKind(v), f.Type)
		}
		if f.Type == "integer" && n != math.Trunc(n) {
			return fmt.Errorf("%v, not an integer", n)
		}
		if f.Minimum != nil && n < *f.Minimum || f.Maximum != nil && n > *f.Maximum {
			return fmt.Errorf("%v, outside %s", n, bounds(f))
		}
		if len(f.Enum) > 0 && !slices.Contains(f.Enum, strconv.FormatFloat(n, 'f', -1, 64)) {
			return fmt.Errorf("%v, which is not one of %q", n, f.Enum)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s, not a boolean", jsonKind(v))
		}
	case "array":
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s, not an array", jsonKind(v))
		}
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				return fmt.Errorf("an item that is %s, not a string", jsonKind(it))
			}
			if len(f.Enum) > 0 && !slices.Contains(f.Enum, s) {
				return fmt.Errorf("the item %q, which is not one of %q", s, f.Enum)
			}
		}
	default:
		return fmt.Errorf("a value, but the form's type %q is none darman knows", f.Type)
	}
	return nil
}

func bounds(f permission.ElicitField) string {
	lo, hi := "-∞", "∞"
	if f.Minimum != nil {
		lo = strconv.FormatFloat(*f.Minimum, 'f', -1, 64)
	}
	if f.Maximum != nil {
		hi = strconv.FormatFloat(*f.Maximum, 'f', -1, 64)
	}
	return "[" + lo + ", " + hi + "]"
}

// jsonKind names a decoded JSON value's kind for an error message.
func jsonKind(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case float64:
		return "the number " + strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return "the boolean " + strconv.FormatBool(v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
