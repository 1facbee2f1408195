package server

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FormatSourceInput is the format_source tool's input.
type FormatSourceInput struct {
	Path   string  `json:"path" jsonschema:"the file, relative to the project root (its extension picks the formatter)" example:"\"main.go\""`
	Source *string `json:"source,omitempty" jsonschema:"text to format as if it were the file's content; without it the file on disk is formatted. Nothing is written" example:"\"package main\\nfunc main(){}\\n\""`
}

// FormatSourceOutput is the format_source tool's output.
type FormatSourceOutput struct {
	envelope
	Path      string `json:"path"`
	Formatted string `json:"formatted" jsonschema:"the formatted text"`
	Diff      string `json:"diff" jsonschema:"a unified diff from the input to the formatted text; empty when already formatted"`
	Changed   bool   `json:"changed"`
}

func (s *Server) addFormatSource() {
	addTool(s, &mcp.Tool{
		Name:  "format_source",
		Title: "Format a file or text",
		Description: "Formats a file, or text given for that file, the way the project's language server does (gofmt for Go, ...). " +
			"Returns the formatted text and a diff; writes nothing.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.formatSource)
}

func (s *Server) formatSource(ctx context.Context, in FormatSourceInput) (FormatSourceOutput, string, error) {
	var out FormatSourceOutput
	file, err := s.root.Resolve(in.Path)
	if err != nil {
		return out, "", err
	}
	out.Path = s.root.Rel(file)
	var original, formatted string
	if in.Source != nil {
		if !utf8.ValidString(*in.Source) {
			return out, "", toolErrorf(CodeInvalidInput, "source is not valid UTF-8")
		}
		if len(*in.Source) > maxSource {
			return out, "", toolErrorf(CodeInvalidInput, "source is %d bytes; at most %d are accepted", len(*in.Source), maxSource)
		}
		original = *in.Source
		err = s.overlay.with(file, original, func() error {
			var err error
			formatted, err = s.pool.Format(ctx, file)
			// The server goes back to the file's real content (or
			// forgets a file that does not exist).
			if terr := s.pool.Touch(context.WithoutCancel(ctx), file); terr != nil {
				s.log.Debug("mcp: restoring a formatted file", "path", file, "err", terr)
			}
			return err
		})
	} else {
		data, rerr := s.overlay.ReadFile(ctx, file)
		if rerr != nil {
			return out, "", toolErrorf(CodeInvalidInput, "%s: %v (give source to format text for a file that does not exist)", in.Path, rerr)
		}
		original = string(data)
		formatted, err = s.pool.Format(ctx, file)
	}
	if err != nil {
		return out, "", err
	}
	out.Formatted = formatted
	out.Diff = unifiedDiff(out.Path, original, formatted)
	out.Changed = original != formatted
	if !out.Changed {
		return out, out.Path + " is already formatted", nil
	}
	return out, strings.TrimRight(out.Diff, "\n"), nil
}
