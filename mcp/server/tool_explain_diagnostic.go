package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/internal/lazyre"
)

// ExplainDiagnosticInput is the explain_diagnostic tool's input.
type ExplainDiagnosticInput struct {
	Code string `json:"code" jsonschema:"the diagnostic's code, as diagnostics or check_source gave it" example:"\"UndeclaredName\""`
	Path string `json:"path,omitempty" jsonschema:"a file, relative to the project root, that has the diagnostic: its occurrences and the server's description of them are added" example:"\"main.go\""`
}

// Occurrence is one place the diagnostic is reported.
type Occurrence struct {
	Problem
	// Hover is the server's hover text at that place.
	Hover string `json:"hover,omitempty"`
}

// ExplainDiagnosticOutput is the explain_diagnostic tool's output.
type ExplainDiagnosticOutput struct {
	envelope
	Code string `json:"code"`
	// Source is the tool that uses codes of this shape, when known.
	Source string `json:"source,omitempty" jsonschema:"which checker uses this code, when darman can tell"`
	// Link is where the code is documented: the language server's own
	// link (its codeDescription) when it gave one, else darman's.
	Link        string       `json:"link,omitempty" jsonschema:"where the code is documented: the language server's link when it gave one"`
	Explanation string       `json:"explanation"`
	Occurrences []Occurrence `json:"occurrences" jsonschema:"where the file given has it, with the server's messages"`
	// Known says whether darman recognised the code at all.
	Known bool `json:"known"`
}

func (s *Server) addExplainDiagnostic() {
	addTool(s, &mcp.Tool{
		Name:  "explain_diagnostic",
		Title: "What a diagnostic code means",
		Description: "Says what a diagnostic's code means: which checker uses it, where it is documented (the language server's " +
			"own link when it gives one), and, given a file that has it, each occurrence with the server's message, the other " +
			"places the message refers to and the server's description. Says so when the code is not known.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.explainDiagnostic)
}

var (
	rustCode    = lazyre.New(`^E\d{4}$`)
	tsCode      = lazyre.New(`^(?:TS)?\d{4,5}$`)
	goTypesCode = lazyre.New(`^[A-Z][A-Za-z]+$`)
	goAnalyzer  = lazyre.New(`^[a-z][a-z0-9]+$`)
)

// describeCode says what darman knows of a code from its shape and the
// checker that reported it (empty when unknown).
func describeCode(code, source string) (src, link, explanation string) {
	switch {
	case strings.HasPrefix(code, "report") || source == "Pyright" || source == "basedpyright":
		return "pyright", "https://microsoft.github.io/pyright/#/configuration?id=" + code,
			"a pyright rule; its setting of the same name in pyrightconfig.json or pyproject.toml changes its severity"
	case rustCode.MatchString(code) && (source == "" || source == "rustc"):
		return "rustc", "https://doc.rust-lang.org/error_codes/" + code + ".html", "a Rust compiler error; the link explains it with examples"
	case strings.HasPrefix(code, "clippy::"):
		return "clippy", "https://rust-lang.github.io/rust-clippy/master/index.html#" + strings.TrimPrefix(code, "clippy::"), "a Clippy lint"
	case tsCode.MatchString(code) && (source == "" || source == "ts" || source == "typescript"):
		return "typescript", "", "a TypeScript compiler diagnostic (TS" + strings.TrimPrefix(code, "TS") + "); TypeScript publishes no page per code, so the message and the server's hover are the explanation"
	case goTypesCode.MatchString(code) && (source == "" || source == "compiler" || source == "go list"):
		return "go type checker", "https://pkg.go.dev/golang.org/x/tools/internal/typesinternal#" + code,
			"a Go type-checking error; the link describes the error class with examples"
	case goAnalyzer.MatchString(code) && source != "" && source != "compiler":
		return "go analyzer " + code, "https://pkg.go.dev/golang.org/x/tools/gopls/internal/analysis/" + code,
			"a gopls analyzer's finding; the link is the analyzer's documentation when it is one of gopls's own (others live under golang.org/x/tools/go/analysis/passes)"
	}
	return "", "", ""
}

func (s *Server) explainDiagnostic(ctx context.Context, in ExplainDiagnosticInput) (ExplainDiagnosticOutput, string, error) {
	out := ExplainDiagnosticOutput{Code: strings.TrimSpace(in.Code), Occurrences: []Occurrence{}}
	if out.Code == "" || len(out.Code) > 200 {
		return out, "", toolErrorf(CodeInvalidInput, "give the diagnostic's code, as diagnostics or check_source showed it")
	}
	source, href := "", ""
	if in.Path != "" {
		file, err := s.root.Resolve(in.Path)
		if err != nil {
			return out, "", err
		}
		if err := s.pool.Touch(ctx, file); err != nil {
			return out, "", err
		}
		r, err := s.pool.Diagnostics(ctx, file, s.opts.Wait)
		if err != nil {
			return out, "", err
		}
		ls := lines{}
		for _, d := range r.Items {
			if problemCode(Problem{Code: d.Code, Source: d.Source}) != out.Code && d.Code != out.Code || len(out.Occurrences) == 20 {
				continue
			}
			source = d.Source
			if href == "" {
				href = d.CodeHref
			}
			occ := Occurrence{Problem: s.problem(ls, d)}
			if h, err := s.pool.Hover(ctx, file, positionOf(d.Line, d.Column)); err == nil {
				occ.Hover = h
			}
			out.Occurrences = append(out.Occurrences, occ)
		}
	}
	out.Source, out.Link, out.Explanation = describeCode(out.Code, source)
	switch {
	case href != "":
		// The server's own link beats darman's guess from the code's shape.
		out.Link = href
		if out.Explanation == "" {
			out.Explanation = "the language server documents this code at the link; the occurrences' messages say what it means here"
		}
		out.Known = true
	case out.Explanation != "":
		out.Known = true
	case in.Path == "":
		out.Explanation = "darman does not know this code; give path to a file that has it for the language server's messages, its link to the code's documentation if it has one, and its description of each place"
	default:
		out.Explanation = "darman does not know this code and the language server gave no link for it; the occurrences' messages and hover text are what it says about it"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", out.Code, out.Explanation)
	if out.Link != "" {
		fmt.Fprintf(&b, "documented at %s\n", out.Link)
	}
	for _, o := range out.Occurrences {
		fmt.Fprintf(&b, "%s:%d:%d: %s\n", in.Path, o.Line, o.Column, o.Message)
		for _, r := range o.Related {
			fmt.Fprintf(&b, "\tsee %s:%d:%d: %s\n", r.Path, r.Line, r.Column, r.Message)
		}
	}
	if in.Path != "" && len(out.Occurrences) == 0 {
		fmt.Fprintf(&b, "%s has no diagnostic with this code now\n", in.Path)
	}
	return out, strings.TrimRight(b.String(), "\n"), nil
}
