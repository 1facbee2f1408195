package lsp

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
)

// promptReference is something the user attached to a prompt by name (@ in
// the VS Code panel; docs/protocol.md, "References"): a file, some lines
// of it, a folder, or text only the editor holds (its problems, a
// terminal's output). darman reads files and folders itself, the editor's
// buffer when the file is open, so every editor attaches them the same way.
type promptReference struct {
	Kind  string          `json:"kind,omitempty"` // "file" (the default), "folder" or "text"
	URI   string          `json:"uri,omitempty"`
	Range *protocol.Range `json:"range,omitempty"`
	Label string          `json:"label,omitempty"` // a text reference's name ("Problems")
	Text  string          `json:"text,omitempty"`
}

// The bounds of what references add to a prompt.
const (
	maxReferences      = 20
	maxReferenceBytes  = 100 << 10 // a file's or text's part
	maxFolderEntries   = 500
	referenceCutNotice = "\n… (cut: the rest is longer than darman attaches; read it with the read tool)\n"
)

// referenceParts resolves a prompt's references into the parts that follow
// the typed text. A reference darman must not or cannot read is an error
// that says which and why: nothing is sent then.
func (s *Server) referenceParts(ctx context.Context, refs []promptReference) ([]session.Part, error) {
	if len(refs) > maxReferences {
		return nil, fmt.Errorf("%d references; at most %d go with one prompt", len(refs), maxReferences)
	}
	parts := make([]session.Part, 0, len(refs))
	for i, r := range refs {
		p, err := s.referencePart(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("reference %d: %w", i+1, err)
		}
		parts = append(parts, p)
	}
	return parts, nil
}

func (s *Server) referencePart(ctx context.Context, r promptReference) (session.Part, error) {
	switch r.Kind {
	case "text":
		label := strings.TrimSpace(r.Label)
		if label == "" {
			return session.Part{}, fmt.Errorf("a text reference needs a label (what the text is, e.g. \"Problems\")")
		}
		return session.Part{File: label, Text: cut(r.Text), Embedded: true}, nil
	case "", "file", "folder":
	default:
		return session.Part{}, fmt.Errorf("unknown kind %q: use file, folder or text", r.Kind)
	}
	if r.URI == "" {
		return session.Part{}, fmt.Errorf("uri is required for a %s", kindOr(r.Kind))
	}
	path, err := buffer.URIToPath(r.URI)
	if err != nil {
		return session.Part{}, err
	}
	rel, err := s.referencePath(path)
	if err != nil {
		return session.Part{}, err
	}
	info, err := os.Stat(path)
	if err != nil && (r.Kind == "folder" || s.docs.AtPath(path) == nil) {
		return session.Part{}, fmt.Errorf("%s: %w", rel, err)
	}
	if r.Kind == "folder" || (err == nil && info.IsDir()) {
		if err == nil && !info.IsDir() {
			return session.Part{}, fmt.Errorf("%s is a file, not a folder", rel)
		}
		return folderPart(path, rel)
	}
	var content []byte
	if s.ws != nil {
		content, err = s.ws.ReadFile(ctx, path)
	} else {
		content, err = os.ReadFile(path)
	}
	if err != nil {
		return session.Part{}, fmt.Errorf("%s: %w", rel, err)
	}
	if !utf8.Valid(content) || strings.ContainsRune(string(content[:min(len(content), 8000)]), 0) {
		return session.Part{File: rel, Size: len(content), MIME: "application/octet-stream"}, nil
	}
	text := string(content)
	name := rel
	if r.Range != nil {
		lines := strings.SplitAfter(text, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		first, last := int(r.Range.Start.Line), int(r.Range.End.Line)
		if r.Range.End.Character == 0 && last > first {
			last-- // a selection that ends at a line's start holds the lines above it
		}
		if first < 0 || first >= len(lines) || last < first {
			plural := "s"
			if len(lines) == 1 {
				plural = ""
			}
			return session.Part{}, fmt.Errorf("%s has %d line%s; lines %d-%d are not in it", rel, len(lines), plural, first+1, last+1)
		}
		last = min(last, len(lines)-1)
		text = numbered(strings.Join(lines[first:last+1], ""), first+1)
		name = fmt.Sprintf("%s lines %d-%d", rel, first+1, last+1)
	}
	return session.Part{File: name, Text: cut(text), Embedded: true}, nil
}

// referencePath checks that path may go to the model (complete.Attachable)
// and returns the path as the model sees it.
func (s *Server) referencePath(path string) (string, error) {
	return complete.Attachable(s.root, path)
}

// folderPart lists a folder's entries, folders first with a slash, the
// secrets left out.
func folderPart(path, rel string) (session.Part, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return session.Part{}, fmt.Errorf("%s: %w", rel, err)
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].IsDir() && !entries[j].IsDir() })
	var b strings.Builder
	n := 0
	for _, e := range entries {
		name := e.Name()
		if name == ".git" || complete.Secret(strings.TrimPrefix(rel+"/"+name, "./")) {
			continue
		}
		if n == maxFolderEntries {
			fmt.Fprintf(&b, "… (%d entries in all; list the rest with the tools)\n", len(entries))
			break
		}
		if e.IsDir() {
			name += "/"
		}
		b.WriteString(name + "\n")
		n++
	}
	if n == 0 {
		b.WriteString("(empty)\n")
	}
	name := "the folder " + rel
	if rel == "." {
		name = "the workspace folder"
	}
	return session.Part{File: name, Text: b.String(), Embedded: true}, nil
}

// cut bounds an attached text, at a line when it can.
func cut(s string) string {
	if len(s) <= maxReferenceBytes {
		return s
	}
	head := s[:maxReferenceBytes]
	for !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	if i := strings.LastIndexByte(head, '\n'); i > maxReferenceBytes/2 {
		head = head[:i+1]
	}
	return head + referenceCutNotice
}

func kindOr(k string) string {
	if k == "" {
		return "file"
	}
	return k
}
