package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/darman-dev/darman/internal/textdist"
)

// Problem is one thing wrong with the configuration.
type Problem struct {
	// Source names where the value came from: a file path (relative to the
	// workspace root when inside it), DARMAN_CONFIG_CONTENT, the environment
	// variable, or "command line".
	Source string
	// Line and Column (1-based, in bytes) locate a syntax error; 0 otherwise.
	Line, Column int
	// Path is the key path, e.g. permission.bash["git *"]; empty for a
	// problem with the whole source.
	Path string
	// Message says what was wrong and what was expected.
	Message string
	// Err is the underlying error, if any (e.g. from reading a file).
	Err error
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.Source)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Line, p.Column)
	}
	if p.Path != "" {
		b.WriteString(": ")
		b.WriteString(p.Path)
	}
	b.WriteString(": ")
	b.WriteString(p.Message)
	return b.String()
}

func (p Problem) Unwrap() error { return p.Err }

// Error lists the problems found while loading. Use errors.As to get it and
// errors.Is to look through it for an underlying error such as
// fs.ErrPermission.
type Error struct {
	Problems []Problem
	// Omitted counts the problems left out because a source had too many.
	Omitted int
}

func (e *Error) Error() string {
	lines := make([]string, 0, len(e.Problems)+1)
	for _, p := range e.Problems {
		lines = append(lines, p.Error())
	}
	if e.Omitted > 0 {
		lines = append(lines, fmt.Sprintf("(and %d more problems)", e.Omitted))
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns each problem, so errors.As finds a Problem and errors.Is
// finds an underlying error.
func (e *Error) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}

// maxProblems caps the problems reported for one source: past that, the
// file is probably not a darman config at all.
const maxProblems = 20

// problems collects the problems of a load, capped per source.
type problems struct {
	list     []Problem
	perSrc   map[string]int
	omitted  int
	warnings []string
}

func (ps *problems) add(p Problem) {
	if ps.perSrc == nil {
		ps.perSrc = map[string]int{}
	}
	if ps.perSrc[p.Source] >= maxProblems {
		ps.omitted++
		return
	}
	ps.perSrc[p.Source]++
	ps.list = append(ps.list, p)
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &Error{Problems: ps.list, Omitted: ps.omitted}
}

// Key paths: dots before names that are simple identifiers (letters,
// digits, "_" and "-", not starting with a digit or "-"), ["..."] around
// any other map key, [i] for array indexes.

func keyPath(parent, key string) string {
	if isIdent(key) {
		if parent == "" {
			return key
		}
		return parent + "." + key
	}
	return parent + "[" + strconv.Quote(key) + "]"
}

func indexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && (r == '-' || r >= '0' && r <= '9'):
		default:
			return false
		}
	}
	return true
}

// quoteList renders values as `"a", "b" or "c"`.
func quoteList(values []string, conj string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + conj + " " + q[len(q)-1]
}

// suggest returns the candidate the user most likely meant by s, or "".
// A match ignoring case wins; otherwise the closest candidate within an
// edit distance that grows with the word's length.
func suggest(s string, candidates []string) string {
	for _, c := range candidates {
		if strings.EqualFold(s, c) {
			return c
		}
	}
	best, bestDist := "", 0
	limit := max(1, min(3, len(s)/3))
	for _, c := range candidates {
		d := textdist.Levenshtein(strings.ToLower(s), strings.ToLower(c))
		if d <= limit && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}
