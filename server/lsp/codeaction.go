package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/lsp/text"
	"github.com/darman-dev/darman/server/rpc"
)

// codeActionParams are textDocument/codeAction's params. glsp's type is not
// used: its Diagnostic.code never decodes (see docs/protocol.md), and the
// code goes into the prompt.
type codeActionParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	Range        protocol.Range                  `json:"range"`
	Context      struct {
		Diagnostics []diagnostic `json:"diagnostics"`
		Only        []string     `json:"only"`
	} `json:"context"`
}

type diagnostic struct {
	Range    protocol.Range  `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"` // a number or a string
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

// PromptAction is a code action offered on a selection: its title, and
// the prompt sent with the selection as context.
type PromptAction struct {
	Title  string `json:"title"`
	Prompt string `json:"prompt"`
}

// DefaultPromptActions are offered on a selection unless the settings'
// codeActions replace them.
var DefaultPromptActions = []PromptAction{
	{Title: "darman: explain", Prompt: "Explain what the selected code does and why, briefly. Do not change any file."},
	{Title: "darman: improve", Prompt: "Improve the selected code: make it clearer, simpler or more robust without changing what it does, and say what you changed."},
	{Title: "darman: write tests", Prompt: "Write tests for the selected code, in the style of the project's existing tests, and run them."},
	{Title: "darman: document", Prompt: "Write or improve the documentation comments of the selected code, in the language's usual style."},
}

// instructionRe finds a "darman:" instruction in a comment: after //, #,
// --, ;, /* or <!--.
// It is compiled on first use, not when any darman command starts.
var instructionRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?://|#|--|;|/\*|<!--)\s*darman:\s*(.+?)\s*(?:\*/|-->)?\s*$`)
})

// contextLines is how many lines around a diagnostic go into its prompt.
const contextLines = 3

// codeAction offers darman's actions at a place in a document. It never
// waits: not for the model, not for the agent to start.
func (s *Server) codeAction(_ context.Context, raw json.RawMessage) (any, error) {
	var p codeActionParams
	if err := rpc.Decode(raw, &p); err != nil {
		return nil, err
	}
	uri := p.TextDocument.URI
	doc := s.docs.Get(uri)
	var content *text.Content
	if doc != nil && doc.Lost == nil {
		content = doc.Content
	}
	shown := uri
	if path, err := buffer.URIToPath(uri); err == nil && s.ws != nil {
		shown = s.ws.Shown(path)
	}
	actions := []protocol.CodeAction{}
	add := func(kind protocol.CodeActionKind, title string, cmd protocol.Command, diags ...diagnostic) {
		if !wanted(p.Context.Only, kind) {
			return
		}
		a := protocol.CodeAction{Title: title, Kind: &kind, Command: &cmd}
		if len(diags) > 0 {
			a.Diagnostics = toProtocolDiagnostics(diags)
		}
		actions = append(actions, a)
	}

	for _, q := range s.questions.list() {
		what := clipTitle(describe(q.req))
		add(protocol.CodeActionKindQuickFix, "darman: allow "+what, answerCommand("darman: allow "+what, q.id, "allow_once"))
		add(protocol.CodeActionKindQuickFix, "darman: reject "+what, answerCommand("darman: reject "+what, q.id, "reject_once"))
	}

	for i, d := range p.Context.Diagnostics {
		title := "darman: fix this problem"
		if len(p.Context.Diagnostics) > 1 {
			title = fmt.Sprintf("darman: fix this problem (%d: %s)", i+1, clipTitle(d.Message))
		}
		add(protocol.CodeActionKindQuickFix, title, promptCommand(title, fixPrompt(shown, d), uri, around(d.Range, content)), d)
	}

	selection := p.Range.Start != p.Range.End
	if selection {
		r := p.Range
		for _, pa := range s.promptActions() {
			add(protocol.CodeActionKindRefactorRewrite, pa.Title, promptCommand(pa.Title, pa.Prompt, uri, &r))
		}
	}

	if content != nil {
		for line := p.Range.Start.Line; line <= p.Range.End.Line && int(line) < content.LineCount(); line++ {
			l, _ := content.Line(int(line))
			if !strings.Contains(l, "darman:") {
				continue
			}
			m := instructionRe().FindStringSubmatch(l)
			if m == nil {
				continue
			}
			r := protocol.Range{Start: protocol.Position{Line: line}, End: protocol.Position{Line: line}}
			prompt := fmt.Sprintf("Do what this comment at %s line %d asks: %q. Then remove the darman: comment.", shown, line+1, m[1])
			add(protocol.CodeActionKindRefactorRewrite, "darman: do it", promptCommand("darman: do it", prompt, uri, &r))
			break
		}
	}

	for _, id := range s.handoffSessions() {
		add(protocol.CodeActionKindSource, handoffTitle(id), handoffCommand(id))
	}

	if a, err := s.agent.peek(); err == nil {
		r := p.Range
		for _, c := range s.knownCommands(a).List() {
			if c.Origin == prompt.Builtin {
				continue // about the session, not the selection
			}
			title := "darman: /" + c.Name
			args := map[string]any{"name": c.Name, "context": promptContext{URI: uri, Range: &r}}
			add(protocol.CodeActionKindSource, title, protocol.Command{Title: title, Command: "darman.command.run", Arguments: []any{args}})
		}
	}
	return actions, nil
}

// resolveCodeAction returns the action as it is: darman's actions carry
// their command already.
func (s *Server) resolveCodeAction(_ context.Context, raw json.RawMessage) (any, error) {
	var a json.RawMessage
	if err := rpc.Decode(raw, &a); err != nil {
		return nil, err
	}
	return a, nil
}

// wanted reports whether kind passes the client's "only" filter: a kind
// matches itself and its sub-kinds.
func wanted(only []string, kind protocol.CodeActionKind) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if kind == o || strings.HasPrefix(kind, o+".") {
			return true
		}
	}
	return false
}

func promptCommand(title, prompt, uri string, r *protocol.Range) protocol.Command {
	return protocol.Command{Title: title, Command: "darman.prompt", Arguments: []any{promptArgs{Prompt: prompt, Context: &promptContext{URI: uri, Range: r}}}}
}

func answerCommand(title, requestID, optionID string) protocol.Command {
	return protocol.Command{Title: title, Command: "darman.permission.answer", Arguments: []any{answerArgs{RequestID: requestID, OptionID: optionID}}}
}

// fixPrompt asks to fix one diagnostic. The code around it goes with the
// command as its context range (see around), and darman.prompt adds those
// lines as the buffer holds them when the command runs: the answer stays
// small however many diagnostics there are, and the code is current.
func fixPrompt(shown string, d diagnostic) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Fix this problem in %s at line %d", shown, d.Range.Start.Line+1)
	if d.Source != "" || len(d.Code) > 0 {
		b.WriteString(" (")
		b.WriteString(d.Source)
		if len(d.Code) > 0 {
			if d.Source != "" {
				b.WriteString(" ")
			}
			b.WriteString(strings.Trim(string(d.Code), `"`))
		}
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(d.Message)
	return b.String()
}

// around is the range of whole lines from contextLines before r to
// contextLines after it, within the document; r itself when the buffer is
// unknown.
func around(r protocol.Range, content *text.Content) *protocol.Range {
	if content == nil {
		return &r
	}
	first := max(int(r.Start.Line)-contextLines, 0)
	last := min(int(r.End.Line)+contextLines, content.LineCount()-1)
	line, err := content.Line(last)
	if err != nil {
		return &r
	}
	start, err := content.Offset(protocol.Position{Line: protocol.UInteger(last)})
	if err != nil {
		return &r
	}
	end, err := content.Position(start + len(line))
	if err != nil {
		return &r
	}
	return &protocol.Range{Start: protocol.Position{Line: protocol.UInteger(first)}, End: end}
}

func toProtocolDiagnostics(ds []diagnostic) []protocol.Diagnostic {
	out := make([]protocol.Diagnostic, len(ds))
	for i, d := range ds {
		out[i] = protocol.Diagnostic{Range: d.Range, Message: d.Message}
		if d.Source != "" {
			src := d.Source
			out[i].Source = &src
		}
		if d.Severity > 0 {
			sev := protocol.DiagnosticSeverity(d.Severity)
			out[i].Severity = &sev
		}
		if len(d.Code) > 0 {
			var v any
			if json.Unmarshal(d.Code, &v) == nil {
				out[i].Code = &protocol.IntegerOrString{Value: v}
			}
		}
	}
	return out
}

func clipTitle(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 50 {
		return string(r[:49]) + "…"
	}
	return s
}
