package complete

import (
	"context"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/darman-dev/darman/agent/llm"
)

// Definer finds where the symbol at a position is defined: the
// workspace's language server, through darman's diagnostics pool.
type Definer interface {
	// Definition takes a 1-based line and a 1-based column in characters.
	Definition(ctx context.Context, path string, line, column int) ([]Location, error)
}

// Location is where a symbol is defined: a file and its 1-based line.
type Location struct {
	Path string
	Line int
}

// The definitions looked up around the cursor.
const (
	maxIdents = 5
	// identLines is how many lines before the cursor's are searched for
	// identifiers, besides its own.
	identLines = 2
	// defTTL is how long a definition found stays good; defTimeout how
	// long a lookup may run in the background after its completion
	// stopped waiting (it fills the cache for the next keystrokes).
	defTTL     = 30 * time.Second
	defTimeout = 10 * time.Second
	// defMaxLines caps a definition's snippet.
	defMaxLines = 15
	maxDefCache = 512
)

// SetDefiner gives the engine the language server, once the agent
// started it; nil removes it.
func (e *Engine) SetDefiner(d Definer) {
	e.mu.Lock()
	e.definer = d
	e.mu.Unlock()
}

type defCache struct {
	entries map[string]*defEntry
}

type defEntry struct {
	done chan struct{}
	at   time.Time
	// Set before done is closed.
	file  llm.FIMFile
	found bool
}

// lookupDefinitions asks the language server for the definitions of the
// identifiers around the cursor that the cache does not hold; the channel
// is closed when every one is answered.
func (e *Engine) lookupDefinitions(req Request, prefix string, ls int) <-chan struct{} {
	e.mu.Lock()
	d := e.definer
	e.mu.Unlock()
	if d == nil || req.Path == "" {
		return nil
	}
	ids := cursorIdents(prefix, req.Text, ls, len(prefix))
	var wait []chan struct{}
	now := time.Now()
	e.mu.Lock()
	for _, id := range ids {
		key := req.Path + "\x00" + id.name
		if en := e.defs.entries[key]; en != nil && now.Sub(en.at) < defTTL {
			wait = append(wait, en.done)
			continue
		}
		if len(e.defs.entries) >= maxDefCache {
			clear(e.defs.entries)
		}
		en := &defEntry{done: make(chan struct{}), at: now}
		e.defs.entries[key] = en
		wait = append(wait, en.done)
		line, col := position(req.Text, id.offset)
		go e.define(d, en, req.Path, line, col, id.name)
	}
	e.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for _, w := range wait {
			<-w
		}
		close(done)
	}()
	return done
}

// define runs one lookup in the background.
func (e *Engine) define(d Definer, en *defEntry, path string, line, col int, name string) {
	defer close(en.done)
	ctx, cancel := context.WithTimeout(context.Background(), defTimeout)
	defer cancel()
	t := time.Now()
	locs, err := d.Definition(ctx, path, line, col)
	e.count(func(s *Stats) { s.LSPQueries++; s.LSPMillis += time.Since(t).Milliseconds() })
	if err != nil || len(locs) == 0 {
		return
	}
	l := locs[0]
	if l.Path == path && l.Line == line {
		return // the identifier is its own definition
	}
	if e.Excluded(l.Path) {
		return
	}
	text := e.readDefinition(l)
	if text == "" {
		return
	}
	en.file = llm.FIMFile{Path: e.rel(l.Path), Text: text}
	en.found = true
}

// definitions are the snippets of the definitions found for the cursor's
// identifiers, within the definition budget; those in the windows the
// model sees anyway are left out.
func (e *Engine) definitions(req Request, prefixText, prefix, suffix string) []llm.FIMFile {
	if req.Path == "" {
		return nil
	}
	ids := cursorIdents(prefixText, req.Text, lineStart(prefixText, len(prefixText)), len(prefixText))
	budget := e.o.DefinitionTokens * bytesPerToken
	var out []llm.FIMFile
	seen := map[string]bool{}
	late := 0
	for _, id := range ids {
		e.mu.Lock()
		en := e.defs.entries[req.Path+"\x00"+id.name]
		e.mu.Unlock()
		if en == nil {
			continue
		}
		select {
		case <-en.done:
		default:
			late++
			continue
		}
		if !en.found || seen[en.file.Text] || len(en.file.Text) > budget {
			continue
		}
		if first := firstLine(en.file.Text); strings.Contains(prefix, first) || strings.Contains(suffix, first) {
			continue
		}
		seen[en.file.Text] = true
		budget -= len(en.file.Text)
		out = append(out, en.file)
	}
	if late > 0 {
		e.count(func(s *Stats) { s.LSPLate += late })
	}
	return out
}

// cursorIdents are the identifiers worth a definition near the cursor at
// offset (in prefix): on its line and the identLines before, nearest
// first, without keywords and the word being typed.
func cursorIdents(prefix, text string, ls, offset int) []ident {
	from := ls
	for n := 0; n < identLines && from > 0; n++ {
		from = lineStart(prefix, from-1)
	}
	to := lineEnd(text, min(offset, len(text)))
	if offset > len(text) {
		to = offset
	}
	src := prefix[from:offset]
	if offset <= len(text) && to > offset {
		src += text[offset:to]
	}
	var found []ident
	forIdents(src, func(i, j int) {
		abs := from + i
		touching := abs <= offset && from+j >= offset
		if name := src[i:j]; len(name) >= 2 && !keywords[name] && !touching {
			found = append(found, ident{name: name, offset: abs})
		}
	})
	// Nearest to the cursor first, each name once.
	var out []ident
	seen := map[string]bool{}
	for len(out) < maxIdents && len(found) > 0 {
		best := 0
		for k := range found {
			if dist(found[k].offset, offset) < dist(found[best].offset, offset) {
				best = k
			}
		}
		if id := found[best]; !seen[id.name] {
			seen[id.name] = true
			out = append(out, id)
		}
		found = append(found[:best], found[best+1:]...)
	}
	return out
}

func dist(a, b int) int {
	if a < b {
		return b - a
	}
	return a - b
}

// position is the 1-based line and character column of offset.
func position(text string, offset int) (line, col int) {
	ls := lineStart(text, offset)
	return strings.Count(text[:ls], "\n") + 1, utf8.RuneCountInString(text[ls:offset]) + 1
}

// readDefinition is the text of a definition: its doc comment lines, its
// first line and, when it opens a block, the lines up to the block's end,
// at most defMaxLines.
func (e *Engine) readDefinition(l Location) string {
	text := ""
	if e.o.Buffers != nil {
		for _, b := range e.o.Buffers() {
			if b.Path == l.Path {
				text = b.Text
				break
			}
		}
	}
	if text == "" {
		read := e.o.ReadFile
		if read == nil {
			read = os.ReadFile
		}
		b, err := read(l.Path)
		if err != nil || len(b) > maxIndexed {
			return ""
		}
		text = string(b)
	}
	lines := strings.SplitAfter(text, "\n")
	i := l.Line - 1
	if i < 0 || i >= len(lines) {
		return ""
	}
	first := i
	for first > 0 && i-first < 3 && isCommentLine(lines[first-1]) {
		first--
	}
	depth, last := 0, i
	indent := leadingSpace(lines[i])
	for k := i; k < len(lines) && k-i < defMaxLines; k++ {
		last = k
		line := lines[k]
		depth += strings.Count(line, "{") + strings.Count(line, "(") + strings.Count(line, "[") -
			strings.Count(line, "}") - strings.Count(line, ")") - strings.Count(line, "]")
		trimmed := strings.TrimSpace(line)
		if k == i && depth <= 0 && !strings.HasSuffix(trimmed, ":") {
			break
		}
		if k > i && depth <= 0 {
			// A Python-like block ends at a line indented no deeper than
			// the definition.
			if !strings.HasSuffix(strings.TrimSpace(lines[i]), ":") || (trimmed != "" && leadingSpace(line) <= indent) {
				if trimmed != "" && leadingSpace(line) <= indent && strings.HasSuffix(strings.TrimSpace(lines[i]), ":") {
					last = k - 1
				}
				break
			}
		}
	}
	var sb strings.Builder
	for k := first; k <= last; k++ {
		sb.WriteString(lines[k])
	}
	return strings.TrimRight(sb.String(), "\n") + "\n"
}

func isCommentLine(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "*") ||
		strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "--") || strings.HasPrefix(t, "///")
}

func leadingSpace(line string) int {
	return len(line) - len(strings.TrimLeft(line, " \t"))
}
