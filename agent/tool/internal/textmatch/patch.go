package textmatch

import (
	"fmt"
	"strings"
)

// The "*** Begin Patch" format OpenAI's models are trained to write: a list
// of file operations, each an Add (the whole content, every line with "+"),
// a Delete, or an Update made of chunks. A chunk may start with "@@" and a
// line to find first (a function's signature, say); then context lines
// (" "), removed lines ("-") and added lines ("+"); "*** End of File" pins
// it to the end of the file.

const (
	patchBegin  = "*** Begin Patch"
	patchEnd    = "*** End Patch"
	patchAdd    = "*** Add File: "
	patchDelete = "*** Delete File: "
	patchUpdate = "*** Update File: "
	patchMove   = "*** Move to: "
	patchEOF    = "*** End of File"
)

type PatchOpKind int

const (
	OpAdd PatchOpKind = iota
	OpDelete
	OpUpdate
)

// PatchOp is one file operation of a patch.
type PatchOp struct {
	Kind   PatchOpKind
	Path   string
	MoveTo string   // for an update that also renames
	Lines  []string // an add's content
	Chunks []PatchChunk
}

// PatchChunk is one change inside an updated file.
type PatchChunk struct {
	context string   // the "@@ …" line to find first, "" for none
	old     []string // context and removed lines, in order
	new     []string // context and added lines, in order
	// ctx[k] is, for new[k] that is a context line, its index in old (so
	// the file's own text of it is kept); -1 for an added line.
	ctx  []int
	eof  bool
	line int // where the chunk starts in the patch, for errors
	// blanks counts the empty patch lines at the chunk's end, taken as
	// empty context lines that lost their space.
	blanks int
}

// ParsePatch reads a patch. Errors say which line is wrong and how.
func ParsePatch(text string) ([]PatchOp, error) {
	lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(text), "\r\n", "\n"), "\n")
	lines = stripHeredoc(lines)
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != patchBegin {
		return nil, fmt.Errorf("the patch must start with a %q line", patchBegin)
	}
	if strings.TrimSpace(lines[len(lines)-1]) != patchEnd {
		return nil, fmt.Errorf("the patch must end with a %q line", patchEnd)
	}
	lines = lines[1 : len(lines)-1]
	var ops []PatchOp
	for i := 0; i < len(lines); {
		line := strings.TrimRight(lines[i], " ")
		n := i + 2 // the line's number in the patch, 1-based
		switch {
		case strings.HasPrefix(line, patchAdd):
			op := PatchOp{Kind: OpAdd, Path: strings.TrimSpace(line[len(patchAdd):])}
			i++
			for ; i < len(lines) && !isOpHeader(lines[i]); i++ {
				l, ok := strings.CutPrefix(lines[i], "+")
				if !ok {
					return nil, fmt.Errorf("line %d: every line of an added file starts with \"+\", got %q", i+2, lines[i])
				}
				op.Lines = append(op.Lines, l)
			}
			ops = append(ops, op)
		case strings.HasPrefix(line, patchDelete):
			ops = append(ops, PatchOp{Kind: OpDelete, Path: strings.TrimSpace(line[len(patchDelete):])})
			i++
		case strings.HasPrefix(line, patchUpdate):
			op := PatchOp{Kind: OpUpdate, Path: strings.TrimSpace(line[len(patchUpdate):])}
			i++
			if i < len(lines) && strings.HasPrefix(lines[i], patchMove) {
				op.MoveTo = strings.TrimSpace(lines[i][len(patchMove):])
				i++
			}
			var err error
			if op.Chunks, i, err = parseChunks(lines, i); err != nil {
				return nil, err
			}
			if len(op.Chunks) == 0 && op.MoveTo == "" {
				return nil, fmt.Errorf("line %d: the update of %s changes nothing", n, op.Path)
			}
			ops = append(ops, op)
		case strings.TrimSpace(line) == "":
			i++
		default:
			return nil, fmt.Errorf("line %d: expected %q, %q or %q, got %q", n, strings.TrimSpace(patchAdd), strings.TrimSpace(patchUpdate), strings.TrimSpace(patchDelete), lines[i])
		}
		if len(ops) > 0 && ops[len(ops)-1].Path == "" {
			return nil, fmt.Errorf("line %d: the file operation names no path", n)
		}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("the patch has no file operations")
	}
	return ops, nil
}

// parseChunks reads an update's chunks from lines[i:], up to the next file
// operation, and returns where it stopped.
func parseChunks(lines []string, i int) ([]PatchChunk, int, error) {
	var chunks []PatchChunk
	var cur *PatchChunk
	start := func(context string, at int) {
		chunks = append(chunks, PatchChunk{context: context, line: at})
		cur = &chunks[len(chunks)-1]
	}
	for ; i < len(lines) && !isOpHeader(lines[i]); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "@@"):
			start(strings.TrimSpace(strings.TrimPrefix(l, "@@")), i+2)
			continue
		case strings.TrimSpace(l) == patchEOF:
			if cur == nil {
				return nil, i, fmt.Errorf("line %d: %q before any change", i+2, patchEOF)
			}
			cur.eof = true
			continue
		}
		if cur == nil {
			// The first chunk may come without its "@@".
			start("", i+2)
		}
		if l == "" {
			// An empty context line whose leading space was lost.
			cur.ctx = append(cur.ctx, len(cur.old))
			cur.old, cur.new = append(cur.old, ""), append(cur.new, "")
			cur.blanks++
			continue
		}
		cur.blanks = 0
		switch {
		case l[0] == ' ':
			cur.ctx = append(cur.ctx, len(cur.old))
			cur.old, cur.new = append(cur.old, l[1:]), append(cur.new, l[1:])
		case l[0] == '-':
			cur.old = append(cur.old, l[1:])
		case l[0] == '+':
			cur.ctx = append(cur.ctx, -1)
			cur.new = append(cur.new, l[1:])
		default:
			return nil, i, fmt.Errorf("line %d: a changed line starts with \" \", \"-\" or \"+\", got %q", i+2, l)
		}
	}
	// Empty lines ending a chunk are usually the blank line before the next
	// operation, not context to match.
	for k := range chunks {
		c := &chunks[k]
		c.old, c.new, c.ctx = c.old[:len(c.old)-c.blanks], c.new[:len(c.new)-c.blanks], c.ctx[:len(c.ctx)-c.blanks]
	}
	return chunks, i, nil
}

func isOpHeader(l string) bool {
	return strings.HasPrefix(l, patchAdd) || strings.HasPrefix(l, patchDelete) || strings.HasPrefix(l, patchUpdate)
}

// stripHeredoc takes away the shell wrapping models sometimes put around a
// patch ("apply_patch <<'EOF'" … "EOF").
func stripHeredoc(lines []string) []string {
	if len(lines) < 3 {
		return lines
	}
	first := strings.TrimSpace(lines[0])
	if !strings.Contains(first, "<<") {
		return lines
	}
	tag := strings.Trim(strings.TrimSpace(first[strings.Index(first, "<<")+2:]), `'"`)
	if strings.TrimSpace(lines[len(lines)-1]) != tag {
		return lines
	}
	return lines[1 : len(lines)-1]
}

// ApplyChunks applies an update's chunks to a file's text (LF line ends),
// in order, each found after the one before.
func ApplyChunks(text string, chunks []PatchChunk) (string, error) {
	hadEnd := strings.HasSuffix(text, "\n") || text == ""
	lines := SplitLines(text)
	type repl struct {
		at, n int
		new   []string
	}
	var repls []repl
	cursor := 0
	for _, c := range chunks {
		if c.context != "" {
			at := seekLines(lines, []string{c.context}, cursor, false)
			if at < 0 {
				return "", fmt.Errorf("the chunk at patch line %d: its context line %q was not found", c.line, c.context)
			}
			cursor = at + 1
		}
		if len(c.old) == 0 {
			at := len(lines)
			if c.context != "" && !c.eof {
				at = cursor
			}
			repls = append(repls, repl{at, 0, c.new})
			continue
		}
		at := seekLines(lines, c.old, cursor, c.eof)
		if at < 0 {
			return "", fmt.Errorf("the chunk at patch line %d: these lines were not found in order after the previous chunk:\n%s",
				c.line, indentLines(c.old))
		}
		// Context lines keep the file's text, which may differ from the
		// patch's in whitespace.
		new := make([]string, len(c.new))
		for k, l := range c.new {
			if c.ctx[k] >= 0 {
				l = lines[at+c.ctx[k]]
			}
			new[k] = l
		}
		repls = append(repls, repl{at, len(c.old), new})
		cursor = at + len(c.old)
	}
	for k := len(repls) - 1; k >= 0; k-- {
		r := repls[k]
		lines = append(lines[:r.at], append(append([]string(nil), r.new...), lines[r.at+r.n:]...)...)
	}
	out := strings.Join(lines, "\n")
	if len(lines) > 0 && hadEnd {
		out += "\n"
	}
	return out, nil
}

// seekLines finds pattern in lines at or after start: exactly, then
// ignoring trailing whitespace, then ignoring all surrounding whitespace.
// With eof, the pattern is looked for at the end of the file first.
func seekLines(lines, pattern []string, start int, eof bool) int {
	if len(pattern) > len(lines) {
		return -1
	}
	for _, norm := range []func(string) string{
		func(s string) string { return s },
		trimRight,
		strings.TrimSpace,
	} {
		match := func(at int) bool {
			for k, p := range pattern {
				if norm(lines[at+k]) != norm(p) {
					return false
				}
			}
			return true
		}
		if eof {
			if at := len(lines) - len(pattern); at >= start && match(at) {
				return at
			}
		}
		for at := start; at+len(pattern) <= len(lines); at++ {
			if match(at) {
				return at
			}
		}
	}
	return -1
}

func indentLines(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    " + l + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
