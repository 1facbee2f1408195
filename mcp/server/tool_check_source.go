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

// CheckSourceOutput is the check_source tool's output.
type CheckSourceOutput struct {
	envelope
	FileProblems
	Counts Counts `json:"counts"`
}

// maxSource bounds the text a client may send (4 MiB is the SDK's own
// request cap).
const maxSource = 4 << 20

func (s *Server) addCheckSource() {
	addTool(s, &mcp.Tool{
		Name:  "check_source",
		Title: "Problems in unsaved text",
		Description: "The language server's errors and warnings for a file's text as you would write it, before writing it: " +
			"the text is checked as if it were that file's content, in the project's context. Nothing is written to disk.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.checkSource)
}

func (s *Server) checkSource(ctx context.Context, in CheckSourceInput) (CheckSourceOutput, string, error) {
	var out CheckSourceOutput
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
	out.FileProblems = s.fileProblems(r, severityRank("hint"))
	for _, p := range out.Problems {
		out.Counts.add(p.Severity)
	}
	text := diagnosticsText(DiagnosticsOutput{Files: []FileProblems{out.FileProblems}, Checked: 1, Counts: out.Counts})
	return out, text, nil
}
