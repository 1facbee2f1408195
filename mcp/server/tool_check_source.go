package server

import (
	"context"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CheckSourceInput is the check_source tool's input.
type CheckSourceInput struct {
	Path   string `json:"path" jsonschema:"the file the text is for, relative to the project root; it need not exist" example:"\"cmd/tool/main.go\""`
	Source string `json:"source" jsonschema:"the file's full text as it would be; nothing is written" example:"\"package main\\n\\nfunc main() {}\\n\""`
}

// maxSource bounds the text a client may send (4 MiB is the SDK's own
// request cap).
const maxSource = 4 << 20

func (s *Server) addCheckSource() {
	addTool(s, &mcp.Tool{
		Name:  "check_source",
		Title: "Problems in unsaved text",
		Description: "The language server's errors and warnings for a file's text as you would write it, before writing it: " +
			"the text is checked as if it were that file's content, in the project's context. Nothing is written to disk. " +
			"The answer is text: the file's counts, then a line per problem (line:column [code]: message; several places of one problem on one line).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.checkSource)
}

// checkSource answers in text only, as diagnostics does.
func (s *Server) checkSource(ctx context.Context, in CheckSourceInput) (textOnly, string, error) {
	var out textOnly
	if !utf8.ValidString(in.Source) {
		return out, "", toolErrorf(CodeInvalidInput, "source is not valid UTF-8")
	}
	if len(in.Source) > maxSource {
		return out, "", toolErrorf(CodeInvalidInput, "source is %d bytes; at most %d are accepted", len(in.Source), maxSource)
	}
	file, err := s.root.Resolve(in.Path)
	if err != nil {
		return out, "", err
	}
	r, err := s.pool.DiagnoseText(ctx, file, in.Source, s.opts.Wait)
	if err != nil {
		return out, "", err
	}
	fp := s.fileProblems(r, severityRank("hint"))
	var counts Counts
	for _, p := range fp.Problems {
		counts.add(p.Severity)
	}
	return out, diagnosticsText(diagnosticsAnswer{Files: []fileReport{fp}, Checked: 1, Counts: counts}), nil
}
