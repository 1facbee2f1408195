package permission

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, subject string
		path             bool
		want             bool
	}{
		// Text flavour: '*' crosses everything, spaces and slashes included.
		{"git status*", "git status", false, true},
		{"git status*", "git status --short", false, true},
		{"git status*", "git statusx", false, true},
		{"git status*", "git stash", false, false},
		{"git status *", "git status", false, true},
		{"git status *", "git status -s", false, true},
		{"git status *", "git statusx", false, false},
		{"rm *", "rm -rf /home/user", false, true},
		{"*", "anything at all / here", false, true},
		{"* /*", "cat /etc/passwd", false, true},
		{"* /*", "cat etc/passwd", false, false},
		{"*../*", "cat a/../../b", false, true},
		{"github_*", "github_create_issue", false, true},
		{"github_*", "gitlab_create_issue", false, false},
		{"a?c", "abc", false, true},
		{"a?c", "a/c", false, true},
		{"a?c", "ac", false, false},
		{"exact", "exact", false, true},
		{"exact", "exactly", false, false},
		{"", "", false, true},
		{"", "x", false, false},
		{`lit\*`, "lit*", false, true},
		{`lit\*`, "litx", false, false},
		{`q\?`, "q?", false, true},
		{`back\\slash`, `back\slash`, false, true},
		{`a\b`, `a\b`, false, true}, // a backslash before an ordinary character is itself
		{"héllo *", "héllo wörld", false, true},
		{"h?llo", "héllo", false, true}, // '?' is one character, not one byte
		{"*a*a*a*a*a*b", strings.Repeat("a", 200), false, false},

		// Path flavour: '*' and '?' stay within one directory, '**' crosses.
		{"*.go", "main.go", true, true},
		{"*.go", "cmd/main.go", true, false},
		{"**.go", "cmd/main.go", true, true},
		{"src/*", "src/a.go", true, true},
		{"src/*", "src/x/a.go", true, false},
		{"src/**", "src/x/a.go", true, true},
		{"src/**", "src", true, true}, // the directory itself
		{"src/**", "srcx", true, false},
		{"**/*.go", "main.go", true, true}, // no directory at all
		{"**/*.go", "a/b/main.go", true, true},
		{"**/*.go", "amain.go", true, true},
		{"a/**/b", "a/b", true, true},
		{"a/**/b", "a/x/y/b", true, true},
		{"a/**/b", "a/xb", true, false},
		{"?.txt", "a.txt", true, true},
		{"?.txt", "/.txt", true, false},
		{"/home/*/.ssh/*", "/home/u/.ssh/id_rsa", true, true},
		{"/home/*/.ssh/*", "/home/u/x/.ssh/id_rsa", true, false},
		{"*", "a/b", true, true}, // a lone '*' is everything
		{"*/*", "a/b/c", true, false},
		{"*", "ab", true, true},
		{"**", "a/b", true, true},
		{"docs/* *", "docs/a b", true, true}, // trailing " *" is only special for commands
		{"docs/* *", "docs/a", true, false},
		{"docs**", "docs/a/b", true, true},
		{"docs**", "docsx", true, true},
		{"docs/**", "docs/", true, true},
		{"docs/**", "docsx/a", true, false},
		{"src*", "src/a", true, false},
		{"git status*", "git status/x", false, true},
	}
	for _, tt := range tests {
		if got := match(tt.pattern, tt.subject, tt.path); got != tt.want {
			t.Errorf("match(%q, %q, path=%v) = %v, want %v", tt.pattern, tt.subject, tt.path, got, tt.want)
		}
		if got := matchAutomaton(tt.pattern, tt.subject, tt.path); got != tt.want {
			t.Errorf("matchAutomaton(%q, %q, path=%v) = %v, want %v", tt.pattern, tt.subject, tt.path, got, tt.want)
		}
	}
}

func TestMatchLongPattern(t *testing.T) {
	// Past the automaton's stack-sized state set.
	pattern := strings.Repeat("ab*", 200) + "z"
	subject := strings.Repeat("abxx", 200) + "z"
	if !match(pattern, subject, false) {
		t.Errorf("long pattern did not match its subject")
	}
	if match(pattern, subject[:len(subject)-1], false) {
		t.Errorf("long pattern matched a subject missing its last character")
	}
}

func TestEscapePattern(t *testing.T) {
	for _, s := range []string{"plain", "ls *.go", `a\b?c`, "x *", "**", ""} {
		p := escapePattern(s)
		for _, path := range []bool{false, true} {
			if !match(p, s, path) {
				t.Errorf("escapePattern(%q) = %q does not match %q (path=%v)", s, p, s, path)
			}
		}
		if s != "" && match(p, s+"x", false) {
			t.Errorf("escapePattern(%q) = %q matches more than the string", s, p)
		}
	}
}
