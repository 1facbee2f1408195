// Package lazyre holds regular expressions that are compiled when first
// used rather than when darman starts. A package-level
// regexp.MustCompile runs in its package's initializer, so every darman
// command, `darman version` and the sandbox helper included, paid for
// compiling every pattern any linked package declares.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on its first use.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// all is every Regexp made, for Check.
var all struct {
	sync.Mutex
	list []*Regexp
}

// New returns expr, to be compiled by regexp.MustCompile when first used:
// an invalid expr panics then. Check finds that first.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr}
	all.Lock()
	all.list = append(all.list, r)
	all.Unlock()
	return r
}

// Check compiles every expression made so far (in a test: those of every
// package the test links) and returns the first that does not compile.
func Check() error {
	all.Lock()
	defer all.Unlock()
	for _, r := range all.list {
		if _, err := regexp.Compile(r.expr); err != nil {
			return err
		}
	}
	return nil
}

// Get returns the compiled expression.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// MatchString reports whether s contains a match.
func (r *Regexp) MatchString(s string) bool { return r.Get().MatchString(s) }

// FindStringSubmatch is regexp.Regexp's.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Get().FindStringSubmatch(s) }

// FindAllStringSubmatchIndex is regexp.Regexp's.
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.Get().FindAllStringSubmatchIndex(s, n)
}

// ReplaceAllString is regexp.Regexp's.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Get().ReplaceAllString(src, repl)
}

// ReplaceAllStringFunc is regexp.Regexp's.
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Get().ReplaceAllStringFunc(src, repl)
}
