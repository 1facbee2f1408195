package hook

import (
	"regexp"
	"slices"
	"strings"
)

// matcher decides which names run a hook, as Claude Code's matchers do:
// all of them ("", "*"), a list of exact names ("Edit|Write", also with
// commas), or a regular expression found anywhere in the name.
type matcher struct {
	all   bool
	names []string
	re    *regexp.Regexp
}

func compile(pattern string) (matcher, error) {
	p := strings.TrimSpace(pattern)
	if p == "" || p == "*" {
		return matcher{all: true}, nil
	}
	if isNameList(p) {
		var names []string
		for _, n := range strings.FieldsFunc(p, func(r rune) bool { return r == '|' || r == ',' }) {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		return matcher{names: names}, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return matcher{}, err
	}
	return matcher{re: re}, nil
}

// isNameList reports whether a matcher holds only names and separators.
func isNameList(p string) bool {
	for _, r := range p {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '_', r == '-', r == '|', r == ',', r == ' ':
		default:
			return false
		}
	}
	return true
}

// matches reports whether any of the names (a tool's darman and Claude
// names) matches.
func (m matcher) matches(names []string) bool {
	switch {
	case m.all:
		return true
	case m.re != nil:
		return slices.ContainsFunc(names, m.re.MatchString)
	}
	for _, n := range names {
		if slices.Contains(m.names, n) {
			return true
		}
	}
	return false
}
