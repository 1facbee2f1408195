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

	"github.com/darman-dev/darman/agent/permission"
)

// The elicitation vocabulary is the agent's (permission.Elicitor, beside
// the permission Asker), so a front's elicitor serves as the manager's
// Gate with no translation: the editor through the LSP front, the terminal
// for darman run.
type (
	// Gate takes a server's elicitation to a human (see
	// permission.Elicitor).
	Gate         = permission.Elicitor
	Elicitation  = permission.Elicitation
	ElicitField  = permission.ElicitField
	ElicitAnswer = permission.ElicitAnswer
	// DeclineGate answers every elicitation with "decline": the gate of a
	// front with no human behind it (CI, a pipe).
	DeclineGate = permission.DeclineElicitor
)

// ErrNoHuman is what a Gate returns when nobody is there to answer.
var ErrNoHuman = permission.ErrNoHuman

// elicitFunc asks one elicitation, as Gate.Elicit does (tool.Env.Elicit).
type elicitFunc = func(context.Context, Elicitation) (ElicitAnswer, error)

// elicitor finds who asks an elicitation: the turn of the call it came in
// (multi-round-trip, its context), else the one of the session whose calls
// are in flight on the server, when there is exactly one and its turn
// asks on its stream (tool.Env.Elicit), else the manager's Gate.
func (b *binding) elicitor(ctx context.Context) elicitFunc {
	if ask, ok := ctx.Value(elicitKey{}).(elicitFunc); ok {
		return ask
	}
	b.mu.Lock()
	found, ok := b.oneSessionLocked()
	b.mu.Unlock()
	if ok && found.elicit != nil {
		return found.elicit
	}
	return b.m.opts.Gate.Elicit
}

// elicit routes a server's elicitation/create to the human: on the turn's
// stream when it came during a call of one (see elicitor), else through
// the manager's gate.
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
	resume := b.pauseCalls(ctx) // the person's time is not the call's
	ans, err := b.elicitor(ctx)(ctx, e)
	resume()
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
