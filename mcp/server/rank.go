package server

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/darman-dev/darman/diagnostics"
)

// The ranking below orders the symbols any language server returns for a
// name the way someone who knows the code would read them: the name as
// asked first, the project's own code before its dependencies, code
// before its tests. It only looks at names, containers and paths, so
// gopls, typescript-language-server, pyright and clangd answers go
// through the same rules.

// match is how well a symbol's name fits the query, best first.
type match int

const (
	matchExact     match = iota // the name as asked, case and all
	matchExactFold              // the name in another case
	matchPrefix                 // the name starts with the query
	matchSubstring              // the name contains the query
	matchFuzzy                  // what else the server matched
)

func (m match) String() string {
	return [...]string{"exact", "exact-case-insensitive", "prefix", "substring", "fuzzy"}[m]
}

// Scopes of a lookup.
const (
	scopeWorkspace    = "workspace"
	scopeDependencies = "dependencies"
	scopeAll          = "all"
)

// rankedSymbol is a server's symbol with what the ranking found.
type rankedSymbol struct {
	diagnostics.Symbol
	match match
	// dep says it is declared outside the project's own code: outside the
	// root, or in a directory of installed packages inside it.
	dep bool
	// test says it is declared in test code.
	test bool
}

// query is a name as asked: its last part and what qualifies it
// ("pkg.Foo", "T.M", "ns::f").
type query struct {
	full, qual, last string
}

func parseQuery(q string) query {
	q = strings.TrimSpace(q)
	norm := strings.ReplaceAll(q, "::", ".")
	out := query{full: q, last: norm}
	if i := strings.LastIndex(norm, "."); i > 0 && i < len(norm)-1 {
		out.qual, out.last = norm[:i], norm[i+1:]
	}
	return out
}

// baseName is a symbol's own name without the receiver or container some
// servers write into it ("(*T).M", "T.M", "ns::f"), and that receiver.
func baseName(name string) (recv, base string) {
	norm := strings.ReplaceAll(name, "::", ".")
	if i := strings.LastIndex(norm, "."); i > 0 && i < len(norm)-1 {
		return strings.Trim(norm[:i], "()*"), norm[i+1:]
	}
	return "", norm
}

// qualifies says whether a query's qualifier names what holds a symbol:
// its container (a package path or its last element, a type, a module) or
// the receiver in its name.
func qualifies(qual, container, recv string) bool {
	if qual == "" {
		return true
	}
	eq := func(s string) bool {
		s = strings.Trim(strings.ReplaceAll(s, "::", "."), "()*")
		if s == "" {
			return false
		}
		ls, lq := strings.ToLower(s), strings.ToLower(qual)
		return ls == lq || strings.HasSuffix(ls, "/"+lq) || strings.HasSuffix(ls, "."+lq)
	}
	return eq(container) || eq(recv) || eq(container+"."+recv)
}

// matchOf classifies a symbol's name against the query.
func matchOf(q query, sym diagnostics.Symbol) match {
	recv, base := baseName(sym.Name)
	if !qualifies(q.qual, sym.Container, recv) {
		return matchFuzzy
	}
	lb, lq := strings.ToLower(base), strings.ToLower(q.last)
	switch {
	case base == q.last || sym.Name == q.full:
		return matchExact
	case lb == lq:
		return matchExactFold
	case strings.HasPrefix(lb, lq):
		return matchPrefix
	case strings.Contains(lb, lq):
		return matchSubstring
	}
	return matchFuzzy
}

// depDirs are directories of installed packages: what is below them is a
// dependency even inside the project.
var depDirs = []string{"node_modules", "vendor", "site-packages", "dist-packages", ".venv", "venv", "__pypackages__", "bower_components"}

// isDependency says whether path (absolute) is outside the project's own
// code.
func isDependency(root, path string) bool {
	if !within(root, path) {
		return true
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return true
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if slices.Contains(depDirs, part) {
			return true
		}
	}
	return false
}

// isTest says whether path is test code by its languages' conventions:
// Go's _test.go and testdata, JavaScript's and TypeScript's .test. and
// .spec. files and __tests__, Python's test_*.py, *_test.py and
// conftest.py, and any tests or test directory.
func isTest(path string) bool {
	slash := filepath.ToSlash(path)
	base := strings.ToLower(filepath.Base(slash))
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	switch {
	case strings.HasSuffix(base, "_test.go"), strings.Contains(base, ".test."), strings.Contains(base, ".spec."),
		strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"), strings.HasSuffix(stem, "_test"),
		base == "conftest.py":
		return true
	}
	for _, dir := range strings.Split(filepath.Dir(slash), "/") {
		switch dir {
		case "testdata", "__tests__", "tests", "test":
			return true
		}
	}
	return false
}

// rankSymbols orders syms for the query: by match, then the project's own
// code before dependencies, then code before tests, then as the servers
// ranked them.
func rankSymbols(root string, q query, syms []diagnostics.Symbol) []rankedSymbol {
	out := make([]rankedSymbol, 0, len(syms))
	for _, s := range syms {
		path := s.Location.Path
		if rel, err := filepath.Rel(root, path); err == nil && within(root, path) {
			path = rel // a root under a tests directory does not make everything a test
		}
		out = append(out, rankedSymbol{Symbol: s, match: matchOf(q, s), dep: isDependency(root, s.Location.Path), test: isTest(path)})
	}
	slices.SortStableFunc(out, func(a, b rankedSymbol) int {
		if a.match != b.match {
			return int(a.match) - int(b.match)
		}
		if a.dep != b.dep {
			return boolRank(a.dep) - boolRank(b.dep)
		}
		return boolRank(a.test) - boolRank(b.test)
	})
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// wantsDependencies says whether a lookup shows dependencies' symbols: the
// scope asks for them, or the query's qualifier names the symbol's
// package or type (json.Marshal names encoding/json's).
func wantsDependencies(scope string, q query, s rankedSymbol) bool {
	if scope == scopeDependencies || scope == scopeAll {
		return true
	}
	recv, _ := baseName(s.Name)
	return q.qual != "" && s.match <= matchSubstring && qualifies(q.qual, s.Container, recv)
}

// maxSignature bounds a signature's length in an answer.
const maxSignature = 120

// signature is a declaration's line cut to what says what it is: no
// body (from the first brace outside parentheses, or a Python def's or
// class's colon), no struct tag, no trailing comment, at most
// maxSignature bytes.
func signature(line string) string {
	line = strings.TrimSpace(line)
	if i := strings.Index(line, "`"); i > 0 {
		line = line[:i]
	}
	if i := strings.Index(line, " //"); i > 0 {
		line = line[:i]
	}
	python := strings.HasPrefix(line, "def ") || strings.HasPrefix(line, "async def ") || strings.HasPrefix(line, "class ")
	depth := 0
scan:
	for i, c := range line {
		switch {
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case depth == 0 && (c == '{' || python && c == ':'):
			line = line[:i]
			break scan
		}
	}
	line = strings.TrimSpace(line)
	if len(line) > maxSignature {
		cut := maxSignature
		for cut > 0 && line[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}
