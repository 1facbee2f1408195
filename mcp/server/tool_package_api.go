package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
)

// PackageAPIInput is the package_api tool's input.
type PackageAPIInput struct {
	Path  string `json:"path,omitempty" jsonschema:"the package's directory (or one of its files), relative to the project root; the root when left out" example:"\"agent/prompt\""`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many bytes of answer (default 6000, at most 60000); the note says what the whole API takes" example:"20000"`
	Tests bool   `json:"tests,omitempty" jsonschema:"also list the exported declarations of the directory's test files (left out by default)" example:"true"`
}

// Bounds of a package_api answer.
const (
	defaultAPIBytes = 6_000 // about 1.5k tokens
	maxAPIBytes     = 60_000
	maxAPIFiles     = 200
	maxDoc          = 120 // a doc comment's first sentence, in bytes
)

func (s *Server) addPackageAPI() {
	addTool(s, &mcp.Tool{
		Name:  "package_api",
		Title: "A package's exported API",
		Description: "Lists what a package (a directory of source files, in any language of the project) exports, in one answer: " +
			"each file's exported types, functions, methods, constants and variables with their line and signature, " +
			"the first sentence of their doc comment, and types' exported fields and members. " +
			"Test files are left out unless tests is true. The answer fits in 6,000 bytes unless limit says more: " +
			"to fit, it drops doc comments first, then types' members, then declarations (constants and variables before functions and types); " +
			"the note says what was left out and the limit that lists it all. For one file use outline, for one symbol describe_symbol.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, s.packageAPI)
}

// apiDecl is one exported declaration of a package.
type apiDecl struct {
	file   string // relative to the package's directory
	line   int
	member bool   // a type's field or member, listed under it
	kind   string // the server's symbol kind
	sig    string
	doc    string
}

// apiFile is one file's declarations, or why the server gave none.
type apiFile struct {
	path  string
	decls []apiDecl
	err   error
}

func (s *Server) packageAPI(ctx context.Context, in PackageAPIInput) (textOnly, string, error) {
	limit := in.Limit
	switch {
	case limit < 0 || limit > maxAPIBytes:
		return textOnly{}, "", toolErrorf(CodeInvalidInput, "limit %d: give 1 to %d bytes, or leave it out for %d", limit, maxAPIBytes, defaultAPIBytes)
	case limit == 0:
		limit = defaultAPIBytes
	}
	dir := s.root.Dir
	if strings.TrimSpace(in.Path) != "" {
		p, err := s.root.Resolve(in.Path)
		if err != nil {
			return textOnly{}, "", err
		}
		dir = p
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return textOnly{}, "", toolErrorf(CodeInvalidInput, "the path %q: %v; give a directory of the project", in.Path, err)
	}
	if !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return textOnly{}, "", toolErrorf(CodeInvalidInput, "reading the directory %s: %v", s.root.Rel(dir), err)
	}
	var files []string
	tests, skipped := 0, 0
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if isTest(e.Name()) && !in.Tests {
			tests++
			continue
		}
		if len(files) == maxAPIFiles {
			skipped++
			continue
		}
		files = append(files, filepath.Join(dir, e.Name()))
	}

	results := make([]apiFile, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = s.fileAPI(ctx, f)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return textOnly{}, "", err
	}

	var served []apiFile
	var missing []string
	for _, r := range results {
		switch {
		case r.err == nil:
			served = append(served, r)
		case errors.Is(r.err, diagnostics.ErrNoServer):
			// Not source code a server reads (README, go.mod, ...).
		default:
			if len(missing) < 5 {
				missing = append(missing, fmt.Sprintf("%s: %v", s.root.Rel(r.path), r.err))
			}
		}
	}
	name := s.root.Rel(dir)
	if name == s.root.Dir || dir == s.root.Dir {
		name = "the project root"
	}
	if len(served) == 0 && len(missing) > 0 {
		return textOnly{}, "", fmt.Errorf("no language server could list %s: %s", name, strings.Join(missing, "; "))
	}
	return textOnly{}, renderAPI(name, served, limit, tests, skipped, missing), nil
}

// apiFiles keeps each file's exported declarations with a sum of the
// outline and text they were read from: the same two give the same
// declarations, and reading them (the file's lines, signatures, docs)
// was most of a package_api answer once the pool kept the outlines.
type apiFiles struct {
	mu    sync.Mutex
	files map[string]apiKept
}

type apiKept struct {
	sum  uint64
	file apiFile
}

// apiSeed seeds the sums of apiFiles.
var apiSeed = maphash.MakeSeed()

// outlineSum sums a file's text and its outline: names, kinds, details
// and places, down the tree.
func outlineSum(text []byte, syms []diagnostics.Symbol) uint64 {
	var h maphash.Hash
	h.SetSeed(apiSeed)
	h.Write(text)
	var num [8]byte
	var walk func([]diagnostics.Symbol)
	walk = func(list []diagnostics.Symbol) {
		for _, sym := range list {
			for _, f := range []string{sym.Name, sym.Kind, sym.Detail, sym.Container} {
				h.WriteString(f)
				h.WriteByte(0)
			}
			for _, n := range []int{sym.Location.Start.Line, sym.Location.Start.Column, len(sym.Children)} {
				binary.LittleEndian.PutUint64(num[:], uint64(n))
				h.Write(num[:])
			}
			walk(sym.Children)
		}
	}
	walk(syms)
	return h.Sum64()
}

// fileAPI asks the file's server for its outline and keeps what the file
// exports, with signatures and docs from the file's text.
func (s *Server) fileAPI(ctx context.Context, path string) apiFile {
	syms, text, err := s.pool.Outline(ctx, path)
	if err != nil {
		return apiFile{path: path, err: err}
	}
	sum := outlineSum(text, syms)
	s.apis.mu.Lock()
	kept, ok := s.apis.files[path]
	s.apis.mu.Unlock()
	if ok && kept.sum == sum {
		return kept.file
	}
	out := readAPI(path, syms, text)
	s.apis.mu.Lock()
	if s.apis.files == nil || len(s.apis.files) >= maxKeptAPIs {
		s.apis.files = map[string]apiKept{}
	}
	s.apis.files[path] = apiKept{sum: sum, file: out}
	s.apis.mu.Unlock()
	return out
}

// maxKeptAPIs bounds apiFiles: when full it starts again.
const maxKeptAPIs = 2000

// readAPI is what a file exports, from its outline and text.
func readAPI(path string, syms []diagnostics.Symbol, text []byte) apiFile {
	raw := strings.Split(string(text), "\n")
	ls := lines{path: newFileLines(text)}
	lang := languageOf(path)
	out := apiFile{path: path}
	base := filepath.Base(path)
	add := func(sym diagnostics.Symbol, member bool) {
		line := sym.Location.Start.Line
		sig := strings.Join(strings.Fields(signature(ls.at(path, line))), " ") // gofmt's alignment
		if _, b := baseName(sym.Name); sig == "" || !strings.Contains(sig, b) {
			sig = sym.Kind + " " + sym.Name // the line does not name it (a server's own name)
			if sym.Detail != "" {
				sig += " " + sym.Detail
			}
		}
		if n := len(out.decls); n > 0 && out.decls[n-1].line == line && out.decls[n-1].sig == sig {
			return // two names of one line (Path, By string)
		}
		if sym.Kind == "variable" || sym.Kind == "constant" {
			sig = cutValue(sig)
		}
		doc := docOf(raw, line, lang)
		if _, b := baseName(sym.Name); strings.HasPrefix(doc, b+" ") {
			doc = doc[len(b)+1:] // "Foo does ...": the line names Foo already
		}
		out.decls = append(out.decls, apiDecl{file: base, line: line, member: member, kind: sym.Kind, sig: sig, doc: doc})
	}
	slices.SortStableFunc(syms, func(a, b diagnostics.Symbol) int { return a.Location.Start.Line - b.Location.Start.Line })
	for _, sym := range syms {
		if !exported(lang, sym.Name, ls.at(path, sym.Location.Start.Line), false) {
			continue
		}
		add(sym, false)
		if !holdsMembers(sym.Kind) {
			continue
		}
		kids := slices.Clone(sym.Children)
		slices.SortStableFunc(kids, func(a, b diagnostics.Symbol) int { return a.Location.Start.Line - b.Location.Start.Line })
		for _, k := range kids {
			if exported(lang, k.Name, ls.at(path, k.Location.Start.Line), true) {
				add(k, true)
			}
		}
	}
	return out
}

// maxValue bounds the value shown of a variable or constant.
const maxValue = 40

// cutValue cuts a variable's or constant's declaration after its first
// maxValue bytes of value: the name and type are its API, not a long
// initializer.
func cutValue(sig string) string {
	i := strings.Index(sig, " = ")
	if i < 0 || len(sig)-i-3 <= maxValue {
		return sig
	}
	cut := i + 3 + maxValue
	for cut > 0 && sig[cut]&0xC0 == 0x80 {
		cut--
	}
	return sig[:cut] + "…"
}

// languageOf names the export rules a file follows, by its extension.
func languageOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".go":
		return "go"
	case ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs":
		return "js"
	case ".py", ".pyi":
		return "python"
	case ".rs":
		return "rust"
	}
	return ""
}

// holdsMembers says whether a declaration's children are its API (a
// type's fields and methods), not a body's locals.
func holdsMembers(kind string) bool {
	switch kind {
	case "struct", "class", "interface", "enum", "module", "namespace", "object":
		return true
	}
	return false
}

// exported says whether a declaration is part of a package's API by its
// language's rules: Go's capital letters (a method's receiver's too),
// JavaScript's and TypeScript's export keyword (a class's members unless
// private), Python's names without a leading underscore (and __init__),
// Rust's pub; in other languages every top-level declaration.
func exported(lang, name, line string, member bool) bool {
	recv, base := baseName(name)
	upper := func(s string) bool {
		s = strings.TrimLeft(s, "*")
		if i := strings.IndexByte(s, '['); i > 0 {
			s = s[:i] // a generic receiver, T[K]
		}
		r, _ := utf8.DecodeRuneInString(s)
		return unicode.IsUpper(r)
	}
	switch lang {
	case "go":
		return upper(base) && (recv == "" || upper(recv))
	case "js":
		if member {
			return !strings.HasPrefix(line, "private ") && !strings.HasPrefix(line, "#") && !strings.HasPrefix(name, "#") && !strings.HasPrefix(line, "protected ")
		}
		return strings.HasPrefix(line, "export ")
	case "python":
		return !strings.HasPrefix(base, "_") || base == "__init__"
	case "rust":
		return strings.HasPrefix(line, "pub ") || strings.HasPrefix(line, "pub(")
	}
	return true
}

// docOf is the first sentence of the doc comment of the declaration at
// line (1-based): the comment lines right above it (//, ///, # or a
// /** ... */ block), or for Python the docstring right below.
func docOf(raw []string, line int, lang string) string {
	if line < 1 || line > len(raw) {
		return ""
	}
	var parts []string
	if lang == "python" {
		for i := line; i < len(raw) && i < line+4; i++ { // the def may span lines
			t := strings.TrimSpace(raw[i])
			if q := strings.TrimLeft(t, "rbuRBU"); strings.HasPrefix(q, `"""`) || strings.HasPrefix(q, "'''") {
				body := q[3:]
				if j := strings.Index(body, q[:3]); j >= 0 {
					return firstSentence(body[:j])
				}
				parts = append(parts, body)
				for k := i + 1; k < len(raw) && k < i+6; k++ {
					t := strings.TrimSpace(raw[k])
					if j := strings.Index(t, q[:3]); j >= 0 {
						parts = append(parts, t[:j])
						break
					}
					if t == "" {
						break
					}
					parts = append(parts, t)
				}
				return firstSentence(strings.Join(parts, " "))
			}
			if t != "" && !strings.HasSuffix(strings.TrimSpace(raw[i-1]), ",") && !strings.HasSuffix(strings.TrimSpace(raw[i-1]), "(") {
				break
			}
		}
		return ""
	}
	i := line - 2
	if i >= 0 && strings.HasSuffix(strings.TrimSpace(raw[i]), "*/") {
		var block []string
		for ; i >= 0; i-- {
			t := strings.TrimSpace(raw[i])
			block = append(block, t)
			if strings.HasPrefix(t, "/*") {
				break
			}
		}
		slices.Reverse(block)
		for _, t := range block {
			t = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(t, "/**"), "/*"), "*/")
			t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "*"))
			if strings.HasPrefix(t, "@") {
				break // JSDoc tags: the prose is over
			}
			parts = append(parts, t)
		}
		return firstSentence(strings.Join(parts, " "))
	}
	for ; i >= 0; i-- {
		t := strings.TrimSpace(raw[i])
		if !strings.HasPrefix(t, "//") {
			break
		}
		if strings.HasPrefix(t, "//go:") || strings.HasPrefix(t, "//nolint") || strings.HasPrefix(t, "//lint:") {
			continue
		}
		parts = append(parts, strings.TrimSpace(strings.TrimLeft(t, "/!")))
	}
	slices.Reverse(parts)
	return firstSentence(strings.Join(parts, " "))
}

// firstSentence is text's first sentence (to ". " or its first blank
// paragraph break), at most maxDoc bytes.
func firstSentence(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if i := strings.Index(text, ". "); i >= 0 {
		text = text[:i+1]
	}
	if len(text) > maxDoc {
		cut := maxDoc
		for cut > 0 && text[cut]&0xC0 == 0x80 {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}

// apiRank orders what a cut keeps: types first, then functions and
// methods, then the rest (constants, variables).
func apiRank(kind string) int {
	switch kind {
	case "struct", "class", "interface", "enum", "type", "type parameter", "module", "namespace":
		return 0
	case "function", "method", "constructor":
		return 1
	}
	return 2
}

// renderAPI writes the package's API within limit bytes. It drops, in
// turn, until the answer fits: doc comments, types' members, then
// declarations by apiRank (the last in the package's order first); the
// note says what went and the limit that lists it all.
func renderAPI(name string, files []apiFile, limit, tests, skipped int, missing []string) string {
	total, members := 0, 0
	for _, f := range files {
		total += len(f.decls)
		for _, d := range f.decls {
			if d.member {
				members++
			}
		}
	}
	head := fmt.Sprintf("%s: %s in %s", name, plural(total, "exported declaration"), plural(len(files), "file"))
	var tail []string
	if tests > 0 {
		tail = append(tail, plural(tests, "test file")+" (tests: true)")
	}
	if skipped > 0 {
		tail = append(tail, fmt.Sprintf("%s past the first %d", plural(skipped, "file"), maxAPIFiles))
	}
	var foot strings.Builder
	for _, m := range missing {
		fmt.Fprintf(&foot, "\nnot in this answer: %s: %s", CodeServerUnavailable, m)
	}
	render := func(docs, withMembers bool, keep func(f, d int) bool) string {
		var b strings.Builder
		b.WriteString(head)
		for fi, f := range files {
			wrote := false
			for di, d := range f.decls {
				if (d.member && !withMembers) || (keep != nil && !keep(fi, di)) {
					continue
				}
				if !wrote {
					b.WriteString("\n" + d.file)
					wrote = true
				}
				indent := "\n"
				if d.member {
					indent = "\n  "
				}
				fmt.Fprintf(&b, "%s%d %s", indent, d.line, d.sig)
				if docs && d.doc != "" {
					b.WriteString(" // " + d.doc)
				}
			}
		}
		return b.String()
	}
	note := func(parts []string) string {
		parts = append(slices.Clone(parts), tail...)
		if len(parts) == 0 {
			return ""
		}
		return "\nnot listed: " + strings.Join(parts, "; ")
	}
	whole := render(true, true, nil)
	full := len(whole) + len(note(nil)) + foot.Len()
	if full <= limit {
		return whole + note(nil) + foot.String()
	}
	raise := fmt.Sprintf("limit %d lists all", full)
	if full > maxAPIBytes {
		raise = fmt.Sprintf("limit %d lists the most; package_api of a subdirectory or outline of a file, the rest", maxAPIBytes)
	}
	if text := render(false, true, nil); len(text)+len(note([]string{"docs (" + raise + ")"}))+foot.Len() <= limit {
		return text + note([]string{"docs (" + raise + ")"}) + foot.String()
	}
	dropped := fmt.Sprintf("docs, %s of types (%s)", plural(members, "member"), raise)
	if text := render(false, false, nil); len(text)+len(note([]string{dropped}))+foot.Len() <= limit {
		return text + note([]string{dropped}) + foot.String()
	}
	// Keep declarations best rank first until the budget is spent.
	type ref struct{ f, d int }
	var order []ref
	for fi, f := range files {
		for di, d := range f.decls {
			if !d.member {
				order = append(order, ref{fi, di})
			}
		}
	}
	slices.SortStableFunc(order, func(a, b ref) int { return apiRank(files[a.f].decls[a.d].kind) - apiRank(files[b.f].decls[b.d].kind) })
	room := limit - len(head) - foot.Len() - len(note([]string{fmt.Sprintf("docs, %s of types, %s (%s)", plural(members, "member"), plural(total, "declaration"), raise)}))
	kept := map[ref]bool{}
	seenFile := map[int]bool{}
	for _, r := range order {
		d := files[r.f].decls[r.d]
		cost := len(fmt.Sprintf("\n%d %s", d.line, d.sig))
		if !seenFile[r.f] {
			cost += 1 + len(d.file)
		}
		if cost > room {
			break // the rest rank lower or as low: keep the order, not a packing
		}
		room -= cost
		kept[r] = true
		seenFile[r.f] = true
	}
	left := total - members - len(kept)
	text := render(false, false, func(f, d int) bool { return kept[ref{f, d}] })
	return text + note([]string{fmt.Sprintf("docs, %s of types, %s (%s)", plural(members, "member"), plural(left, "declaration"), raise)}) + foot.String()
}

// plural is n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
