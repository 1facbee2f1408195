package permission

import (
	"strings"
	"unicode/utf8"
)

// Wildcard patterns, as rules write them:
//
//	*    any run of characters; for path permissions it stops at '/'
//	**   any run of characters, '/' included
//	?    one character; for path permissions not '/'
//	\*   \?  \\   the character itself
//
// Three conveniences, so that one pattern says what people mean:
//
//   - a pattern that is just "*" matches every subject, paths with '/'
//     included: {"read": {"*": "allow"}} means all reads;
//   - for path permissions, a leading "**/" (or "/**/" inside) also matches
//     no directory at all ("**/*.go" matches "main.go"), and a trailing "/**"
//     also matches the directory itself ("docs/**" matches "docs");
//   - for other permissions, a trailing " *" also matches nothing, so
//     "git status *" matches "git status" as well as "git status -s", but not
//     "git statusx".
//
// Matching runs the pattern as a small automaton over the subject, so its
// cost is at most len(pattern)×len(subject) whatever the pattern: no
// backtracking blow-up on patterns like "*a*a*a*a*b".

type tokenKind uint8

const (
	tokLit tokenKind = iota
	tokAny
	tokStar
	tokDoubleStar
)

// tokenAt decodes the pattern token that starts at byte offset i and returns
// its kind, its bytes when it is a literal (one character, the escape
// removed), and the offset of the next token.
func tokenAt(p string, i int) (kind tokenKind, lit string, next int) {
	switch p[i] {
	case '*':
		if i+1 < len(p) && p[i+1] == '*' {
			return tokDoubleStar, "", i + 2
		}
		return tokStar, "", i + 1
	case '?':
		return tokAny, "", i + 1
	case '\\':
		if i+1 < len(p) && isMeta(p[i+1]) {
			return tokLit, p[i+1 : i+2], i + 2
		}
	}
	_, w := utf8.DecodeRuneInString(p[i:])
	return tokLit, p[i : i+w], i + w
}

func isMeta(b byte) bool { return b == '*' || b == '?' || b == '\\' }

// match reports whether subject matches pattern. path selects the path
// flavour, where '*' and '?' do not cross '/'.
func match(pattern, subject string, path bool) bool {
	meta := metaIndex(pattern)
	if meta < 0 {
		return pattern == subject
	}
	if pattern == "*" || pattern == "**" {
		return true
	}
	prefix := literalPrefix(pattern[:meta], pattern[meta:], path)
	if !strings.HasPrefix(subject, prefix) {
		return false
	}
	// Most rules are a literal then one trailing star ("go test *",
	// "docs/**"): past the prefix, that is decided without the automaton.
	switch rest := subject[len(prefix):]; pattern[meta:] {
	case "*":
		if path {
			return strings.IndexByte(rest, '/') < 0
		}
		// "cmd *": the prefix "cmd" is shortened to match the bare command,
		// so what follows must be nothing or start with the space.
		return len(prefix) == meta || rest == "" || rest[0] == ' '
	case "**":
		if !path {
			return true
		}
		// "docs/**": likewise for the directory itself.
		return len(prefix) == meta || rest == "" || rest[0] == '/'
	}
	return matchAutomaton(pattern, subject, path)
}

// matchAutomaton is match without its shortcuts; any pattern, any subject.
func matchAutomaton(pattern, subject string, path bool) bool {
	if pattern == "*" {
		return true
	}
	// States: "before the token at offset i" for i in [0, len(pattern)],
	// where len(pattern) means matched; and, past those, "inside the '**'
	// at offset i, having consumed something", which may not take the
	// no-directory shortcut of "**/".
	n := len(pattern) + 1
	words := (2*n + 63) / 64
	var bufA, bufB [4]uint64
	cur, next := bufA[:], bufB[:]
	if words > len(bufA) {
		cur, next = make([]uint64, words), make([]uint64, words)
	} else {
		cur, next = cur[:words], next[:words]
	}

	set(cur, 0)
	closure(pattern, cur, path)
	for k := 0; k < len(subject); {
		c, w := utf8.DecodeRuneInString(subject[k:])
		char := subject[k : k+w] // compared as bytes, so invalid UTF-8 only matches itself
		k += w
		clear(next)
		active := false
		for i := 0; i < len(pattern); i++ {
			if has(cur, n+i) {
				set(next, n+i)
				active = true
			}
			if !has(cur, i) {
				continue
			}
			kind, lit, j := tokenAt(pattern, i)
			switch kind {
			case tokLit:
				if lit == char {
					set(next, j)
					active = true
				}
			case tokAny:
				if !path || c != '/' {
					set(next, j)
					active = true
				}
			case tokStar:
				if !path || c != '/' {
					set(next, i)
					active = true
				}
			case tokDoubleStar:
				set(next, n+i)
				active = true
			}
		}
		if !active {
			return false
		}
		closure(pattern, next, path)
		cur, next = next, cur
	}
	return has(cur, len(pattern))
}

// closure adds to s every state reachable without consuming a character.
// Those moves only go forward, so one pass in offset order is enough.
func closure(p string, s []uint64, path bool) {
	n := len(p) + 1
	for i := 0; i < len(p); i++ {
		inside, before := has(s, n+i), has(s, i)
		if !inside && !before {
			continue
		}
		kind, _, j := tokenAt(p, i)
		if inside {
			set(s, j)
		}
		if !before {
			continue
		}
		switch kind {
		case tokStar, tokDoubleStar:
			set(s, j) // a star may match nothing
			if kind == tokDoubleStar && path && (i == 0 || p[i-1] == '/') && j < len(p) && p[j] == '/' {
				set(s, j+1) // "**/" may match no directory at all
			}
		case tokLit:
			switch {
			case path && p[i] == '/' && p[j:] == "**":
				set(s, len(p)) // "dir/**" also matches "dir"
			case !path && p[i] == ' ' && p[j:] == "*":
				set(s, len(p)) // "cmd *" also matches "cmd"
			}
		}
	}
}

// metaIndex returns the offset of the first wildcard or escape in p, or -1.
func metaIndex(p string) int {
	for i := 0; i < len(p); i++ {
		if isMeta(p[i]) {
			return i
		}
	}
	return -1
}

// literalPrefix returns the characters every match must start with, given
// the pattern's literal start and the rest from its first wildcard on.
func literalPrefix(prefix, rest string, path bool) string {
	switch {
	case path && rest == "**" && strings.HasSuffix(prefix, "/"):
		return strings.TrimSuffix(prefix, "/")
	case !path && rest == "*" && strings.HasSuffix(prefix, " "):
		return strings.TrimSuffix(prefix, " ")
	}
	return prefix
}

func set(s []uint64, i int)      { s[uint(i)>>6] |= 1 << (uint(i) & 63) }
func has(s []uint64, i int) bool { return s[uint(i)>>6]&(1<<(uint(i)&63)) != 0 }

// escapePattern returns a pattern that matches exactly s.
func escapePattern(s string) string {
	if !patternMeta.in(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isMeta(s[i]) {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
