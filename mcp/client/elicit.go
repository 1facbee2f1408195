package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Gate takes a server's elicitation to a human: the editor through the LSP
// front, the terminal for darman run. A gate is never persisted: an
// elicitation (and above all an open-URL one, whose target may carry a
// one-time token) dies with the process and is never offered again after
// a restart.
type Gate interface {
	// Elicit shows req to the human and returns their answer. It returns
	// ErrNoHuman when nobody can answer (the server is told "decline"); any
	// other error, or ctx ending, tells the server "cancel".
	Elicit(ctx context.Context, req Elicitation) (ElicitAnswer, error)
}

// ErrNoHuman is what a Gate returns when nobody is there to answer.
var ErrNoHuman = errors.New("no human is reachable to answer")

// Elicitation is one request of a server for input from the human.
type Elicitation struct {
	// Server names the server that asks; show it, so the human knows who
	// wants the answer.
	Server string
	// Mode is "form" (fill in Fields) or "url" (open URL in a browser).
	Mode    string
	Message string
	// Fields are a form's fields, in name order, from the requested
	// schema; Schema is that schema as the server sent it.
	Fields []ElicitField
	Schema json.RawMessage
	// URL and ID are an open-URL request's target and elicitation id.
	URL string
	ID  string
}

// ElicitField is one field of a form elicitation.
type ElicitField struct {
	Name        string
	Title       string
	Description string
	// Type is the JSON type: string, number, integer, boolean or array.
	Type     string
	Required bool
	// Enum lists the allowed values of a choice, when the schema has them.
	Enum    []string
	Default any
	// Minimum and Maximum bound a number or an integer, when the schema
	// does.
	Minimum, Maximum *float64
	// Format is a string's format (email, uri, date, date-time).
	Format string
}

// ElicitAnswer is the human's answer.
type ElicitAnswer struct {
	// Action is "accept", "decline" or "cancel".
	Action string
	// Content holds a form's values when Action is "accept"; they are
	// checked against the requested schema before the server sees them.
	Content map[string]any
}

// DeclineGate answers every elicitation with "decline": the gate of a
// front with no human behind it (CI, a pipe).
type DeclineGate struct{}

// Elicit declines.
func (DeclineGate) Elicit(context.Context, Elicitation) (ElicitAnswer, error) {
	return ElicitAnswer{}, ErrNoHuman
}

// elicit routes a server's elicitation/create to the manager's gate.
func (b *binding) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p := req.Params
	e := Elicitation{Server: b.def.Name, Mode: p.Mode, Message: scrubText(p.Message), URL: p.URL, ID: p.ElicitationID}
	if e.Mode == "" {
		e.Mode = "form"
		if p.URL != "" {
			e.Mode = "url"
		}
	}
	if p.RequestedSchema != nil {
		data, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("the requested schema cannot be encoded: %v", err)
		}
		e.Schema = data
		e.Fields = elicitFields(data)
	}
	if e.Mode == "url" && !webURL(e.URL) {
		// The editor or the terminal would hand it to the system to
		// open: a file, a command URI, a custom scheme.
		b.log.Warn("mcp server asked to open something that is not a web page; declined", "url", scrubText(e.URL))
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	b.log.Info("mcp server asks the human", "mode", e.Mode, "fields", len(e.Fields))
	ans, err := b.m.opts.Gate.Elicit(ctx, e)
	switch {
	case errors.Is(err, ErrNoHuman):
		return &mcp.ElicitResult{Action: "decline"}, nil
	case err != nil || ctx.Err() != nil:
		return &mcp.ElicitResult{Action: "cancel"}, nil
	case ans.Action != "accept" && ans.Action != "decline" && ans.Action != "cancel":
		return &mcp.ElicitResult{Action: "cancel"}, nil
	case ans.Action != "accept" || e.Mode == "url":
		return &mcp.ElicitResult{Action: ans.Action}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: ans.Content}, nil
}

// webURL says whether u is an http(s) address with a host and nothing
// that could reach a terminal or a shell as a control character.
func webURL(u string) bool {
	if strings.IndexFunc(u, func(r rune) bool { return r <= ' ' || r == 0x7f || r >= 0x80 && r <= 0x9f }) >= 0 {
		return false
	}
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "https" || p.Scheme == "http") && p.Host != ""
}

// scrubText keeps a server's prompt printable and bounded.
func scrubText(s string) string {
	const max = 2000
	if len(s) > max {
		s = s[:max] + "…"
	}
	out := []rune{}
	for _, r := range s {
		if r < ' ' && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}

// elicitFields reads the flat object schema of a form elicitation.
func elicitFields(schema []byte) []ElicitField {
	var s struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			OneOf       []struct {
				Const any    `json:"const"`
				Title string `json:"title"`
			} `json:"oneOf"`
			Items *struct {
				Enum  []any `json:"enum"`
				AnyOf []struct {
					Const any `json:"const"`
				} `json:"anyOf"`
			} `json:"items"`
			Default any      `json:"default"`
			Minimum *float64 `json:"minimum"`
			Maximum *float64 `json:"maximum"`
			Format  string   `json:"format"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	var out []ElicitField
	for name, p := range s.Properties {
		f := ElicitField{Name: name, Title: scrubText(p.Title), Description: scrubText(p.Description), Type: p.Type, Required: required[name], Default: p.Default,
			Minimum: p.Minimum, Maximum: p.Maximum, Format: p.Format}
		for _, v := range p.Enum {
			f.Enum = append(f.Enum, scrubText(fmt.Sprint(v)))
		}
		for _, o := range p.OneOf {
			f.Enum = append(f.Enum, scrubText(fmt.Sprint(o.Const)))
		}
		if p.Items != nil {
			for _, v := range p.Items.Enum {
				f.Enum = append(f.Enum, scrubText(fmt.Sprint(v)))
			}
			for _, o := range p.Items.AnyOf {
				f.Enum = append(f.Enum, scrubText(fmt.Sprint(o.Const)))
			}
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
