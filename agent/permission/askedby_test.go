package permission

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every question says which of the user's own ask rules asked it, so that
// a PreToolUse hook's allow answers only darman's caution: for each simple
// command of a bash line, for the paths a call or a command names, for the
// files a redirection writes, and for any other permission; an agent's
// rules count as the user's. What darman's defaults ask, what no rule
// decides, and what a dangerous option asks despite an allow rule are
// not the user's asks.
func TestRequestsSayWhichUserRulesAsk(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(root, "out"), 0o755)
	outNotes := filepath.ToSlash(filepath.Join(outside, "notes.txt"))

	marker := Rule{Permission: Bash, Pattern: "touch marker*", Action: Ask}
	everyBash := Rule{Permission: Bash, Pattern: "*", Action: Ask}
	outsideAsk := Rule{Permission: ExternalDirectory, Pattern: filepath.ToSlash(outside) + "/**", Action: Ask}
	outAsk := Rule{Permission: Edit, Pattern: "out/**", Action: Ask}
	github := Rule{Permission: MCP, Pattern: "github_*", Action: Ask}
	rgAllow := Rule{Permission: Bash, Pattern: "rg *", Action: Allow}
	editAllow := Rule{Permission: Edit, Pattern: "*", Action: Allow}

	type asked struct {
		permission string
		patterns   []string
		askedBy    []Rule
	}
	for _, tc := range []struct {
		name  string
		rules []Rule // after Defaults
		call  Call
		want  []asked
	}{
		{name: "a command darman's defaults ask", call: bash("touch marker"),
			want: []asked{{Bash, []string{"touch marker"}, nil}}},
		{name: "a command the user's rule asks", rules: []Rule{marker}, call: bash("touch marker"),
			want: []asked{{Bash, []string{"touch marker"}, []Rule{marker}}}},
		{name: "the user's rule that says what the default says", rules: []Rule{everyBash}, call: bash("make"),
			want: []asked{{Bash, []string{"make"}, []Rule{everyBash}}}},
		{name: "one command of two asked by the user's rule", rules: []Rule{marker}, call: bash("make && touch marker.txt"),
			want: []asked{{Bash, []string{"make", "touch marker.txt"}, []Rule{marker}}}},
		{name: "a dangerous option despite the user's allow", rules: []Rule{rgAllow}, call: bash("rg --pre ./x y"),
			want: []asked{{Bash, []string{"rg --pre ./x y"}, nil}}},
		{name: "no rule at all", call: Call{Permission: "webfetch", Subjects: []string{"https://example.com"}},
			want: []asked{{"webfetch", []string{"https://example.com"}, nil}}},
		{name: "a path outside, by default", call: Call{Permission: Read, Subjects: []string{outNotes}},
			want: []asked{{ExternalDirectory, []string{outNotes}, nil}}},
		{name: "a path outside the user's rule asks", rules: []Rule{outsideAsk}, call: Call{Permission: Read, Subjects: []string{outNotes}},
			want: []asked{{ExternalDirectory, []string{outNotes}, []Rule{outsideAsk}}}},
		{name: "a command naming a path outside the user's rule asks", rules: []Rule{outsideAsk}, call: bash("cat " + outNotes),
			want: []asked{{ExternalDirectory, []string{outNotes}, []Rule{outsideAsk}}}},
		{name: "an edit the user's rule asks", rules: []Rule{editAllow, outAsk},
			call: Call{Permission: Edit, Subjects: []string{"out/a.txt", "b.txt"}},
			want: []asked{{Edit, []string{"out/a.txt"}, []Rule{outAsk}}}},
		{name: "a redirection the user's rule asks", rules: []Rule{editAllow, outAsk}, call: bash("echo hi > out/a.txt"),
			want: []asked{{Edit, []string{"out/a.txt"}, []Rule{outAsk}}}},
		{name: "an MCP tool the agent's rule asks", call: Call{Permission: MCP, Subjects: []string{"github_create_issue"}, Rules: []Rule{github}},
			want: []asked{{MCP, []string{"github_create_issue"}, []Rule{github}}}},
		{name: "an MCP tool, by default", call: Call{Permission: MCP, Subjects: []string{"github_create_issue"}},
			want: []asked{{MCP, []string{"github_create_issue"}, nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asker := &scriptedAsker{t: t, replies: []Reply{{Answer: AllowOnce}, {Answer: AllowOnce}, {Answer: AllowOnce}}}
			c := newChecker(t, Options{Root: root, Asker: asker, Rules: append(Defaults(), tc.rules...)})
			if err := c.Check(t.Context(), tc.call); err != nil {
				t.Fatalf("Check: %v", err)
			}
			var got []asked
			for _, r := range asker.requests() {
				got = append(got, asked{r.Permission, r.Patterns, r.AskedBy})
			}
			if len(got) != len(tc.want) {
				t.Fatalf("asked %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i].permission != tc.want[i].permission || !slices.Equal(got[i].patterns, tc.want[i].patterns) ||
					!slices.Equal(got[i].askedBy, tc.want[i].askedBy) {
					t.Errorf("request %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// Unattended, a question the user's own rule asks is refused as any
// other, and the model is told which rule asks.
func TestUnattendedRefusalNamesTheUsersRule(t *testing.T) {
	marker := Rule{Permission: Bash, Pattern: "touch marker*", Action: Ask}
	c := newChecker(t, Options{Rules: append(Defaults(), marker)})
	err := c.Check(t.Context(), bash("touch marker"))
	var denied *DeniedError
	if !errors.As(err, &denied) || !denied.Unattended || !slices.Equal(denied.AskedBy, []Rule{marker}) {
		t.Fatalf("Check = %#v, want an unattended denial asked by %s", err, marker)
	}
	for _, want := range []string{`the user's own rule bash "touch marker*" ask asks for it`, "no one can be asked in this non-interactive session"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the model reads %q, without %q", err, want)
		}
	}
	err = c.Check(t.Context(), bash("make"))
	if !errors.As(err, &denied) || len(denied.AskedBy) != 0 || strings.Contains(err.Error(), "own rule") {
		t.Errorf("a default's question: %v", err)
	}
}

// Defaults are marked as darman's; a rule as configuration writes it is
// not, and the mark is not part of what is stored.
func TestDefaultsAreMarked(t *testing.T) {
	for _, r := range Defaults() {
		if !r.Default {
			t.Errorf("the default %s is not marked", r)
		}
	}
	if (Rule{Permission: Bash, Pattern: "*", Action: Ask}).Default {
		t.Error("a configured rule is marked as darman's")
	}
}
