package server

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/darman-dev/darman/diagnostics"
)

// lines reads files' lines once per tool call, for lines of context.
type lines map[string]*fileLines

// fileLines is a file's text and where each of its lines starts (lines
// end at "\n"), found once: indexing beats splitting a file into strings
// when a call needs a line or two of each of ten files.
type fileLines struct {
	text   []byte
	starts []int
}

// newFileLines indexes text's lines.
func newFileLines(text []byte) *fileLines {
	starts := make([]int, 1, bytes.Count(text, []byte{'\n'})+1)
	for off := 0; ; {
		i := bytes.IndexByte(text[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		starts = append(starts, off)
	}
	return &fileLines{text: text, starts: starts}
}

// at is the text of a 1-based line of path, trimmed; empty when unknown.
func (ls lines) at(path string, line int) string {
	f, ok := ls[path]
	if !ok {
		f = &fileLines{}
		if data, err := os.ReadFile(path); err == nil {
			f = newFileLines(data)
		}
		ls[path] = f
	}
	if line < 1 || line > len(f.starts) {
		return ""
	}
	end := len(f.text)
	if line < len(f.starts) {
		end = f.starts[line] - 1
	}
	return trimLine(string(f.text[f.starts[line-1]:end]))
}

// trimLine is a line of a file as tools show it: trimmed, and cut after
// 200 bytes.
func trimLine(t string) string {
	t = strings.TrimSpace(t)
	if len(t) > 200 {
		t = t[:200] + "…"
	}
	return t
}

// Span is a place in a file as tools show it: a path relative to the
// root, 1-based lines and columns counted in characters.
type Span struct {
	Path      string `json:"path" jsonschema:"the file, relative to the project root"`
	Line      int    `json:"line" jsonschema:"1-based line"`
	Column    int    `json:"column" jsonschema:"1-based column, in characters"`
	EndLine   int    `json:"endLine,omitempty"`
	EndColumn int    `json:"endColumn,omitempty"`
	// Context is the line's text.
	Context string `json:"context,omitempty" jsonschema:"the text of the line, trimmed"`
}

func (s *Server) span(ls lines, l diagnostics.Location) Span {
	return Span{
		Path: s.root.Rel(l.Path), Line: l.Start.Line, Column: l.Start.Column,
		EndLine: l.End.Line, EndColumn: l.End.Column,
		Context: ls.at(l.Path, l.Start.Line),
	}
}

func (sp Span) String() string {
	if sp.Context == "" {
		return fmt.Sprintf("%s:%d:%d", sp.Path, sp.Line, sp.Column)
	}
	return fmt.Sprintf("%s:%d:%d: %s", sp.Path, sp.Line, sp.Column, sp.Context)
}

// severities in decreasing order of gravity.
var severities = []string{"error", "warning", "information", "hint"}

func severityRank(s string) int {
	for i, v := range severities {
		if v == s {
			return i
		}
	}
	return len(severities)
}

func positionOf(line, col int) diagnostics.Position {
	return diagnostics.Position{Line: line, Column: col}
}
