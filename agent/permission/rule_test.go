package permission

import (
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	r := func(permission, pattern string, action Action) Rule {
		return Rule{Permission: permission, Pattern: pattern, Action: action}
	}
	tests := []struct {
		name       string
		rules      []Rule
		permission string
		subject    string
		want       Action
	}{
		{"no rules asks", nil, Read, "a.go", Ask},
		{"no match asks", []Rule{r(Read, "*.md", Allow)}, Read, "a.go", Ask},
		{"match", []Rule{r(Read, "*.go", Allow)}, Read, "a.go", Allow},
		{"other permission does not match", []Rule{r(Edit, "*", Allow)}, Read, "a.go", Ask},
		{"last match wins: deny after allow",
			[]Rule{r(Read, "*", Allow), r(Read, ".env", Deny)}, Read, ".env", Deny},
		{"last match wins: allow after deny",
			[]Rule{r(Read, ".env", Deny), r(Read, "*", Allow)}, Read, ".env", Allow},
		{"earlier rule applies when later ones do not match",
			[]Rule{r(Read, "*", Allow), r(Read, "*.key", Deny)}, Read, "a.go", Allow},
		{"permission wildcard", []Rule{r("*", "*", Ask), r(Read, "*", Allow)}, Edit, "a.go", Ask},
		{"permission wildcard last wins", []Rule{r(Read, "*", Allow), r("*", "*", Deny)}, Read, "a.go", Deny},
		{"permission prefix wildcard", []Rule{r("web*", "*", Allow)}, "webfetch", "https://x.dev", Allow},
		{"path * stays in one directory", []Rule{r(Edit, "src/*", Allow)}, Edit, "src/x/a.go", Ask},
		{"path ** crosses directories", []Rule{r(Edit, "src/**", Allow)}, Edit, "src/x/a.go", Allow},
		{"path ? is not a slash", []Rule{r(Edit, "a?b", Allow)}, Edit, "a/b", Ask},
		{"text * crosses slashes", []Rule{r("webfetch", "https://go.dev/*", Allow)}, "webfetch", "https://go.dev/doc/x", Allow},
		{"mcp pattern", []Rule{r(MCP, "*", Ask), r(MCP, "github_*", Allow)}, MCP, "github_list_issues", Allow},
		{"mcp other server", []Rule{r(MCP, "*", Ask), r(MCP, "github_*", Allow)}, MCP, "shell_exec", Ask},
		{"external directory is a path permission",
			[]Rule{r(ExternalDirectory, "/tmp/*", Allow)}, ExternalDirectory, "/tmp/a/b", Ask},
		{"unknown action counts as ask", []Rule{r(Read, "*", "yes")}, Read, "a.go", Ask},
		{"bash single command", []Rule{r(Bash, "git status*", Allow)}, Bash, "git status", Allow},
		{"bash compound", []Rule{r(Bash, "git status*", Allow)}, Bash, "git status; rm -rf ~", Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Evaluate(tt.rules, tt.permission, tt.subject); got != tt.want {
				t.Errorf("Evaluate(%v, %q, %q) = %s, want %s", tt.rules, tt.permission, tt.subject, got, tt.want)
			}
		})
	}
}

func TestExplainNamesTheRule(t *testing.T) {
	rules := []Rule{
		{Permission: Bash, Pattern: "git status *", Action: Allow},
		{Permission: Bash, Pattern: "rm *", Action: Deny},
	}
	v := Explain(rules, Bash, "git status && rm -rf build && make")
	if v.Action != Deny {
		t.Fatalf("Action = %s, want deny", v.Action)
	}
	want := []struct {
		subject string
		action  Action
		rule    string
	}{
		{"git status", Allow, "git status *"},
		{"rm -rf build", Deny, "rm *"},
		{"make", Ask, ""},
	}
	if len(v.Checks) != len(want) {
		t.Fatalf("Checks = %+v, want %d", v.Checks, len(want))
	}
	for i, w := range want {
		c := v.Checks[i]
		if c.Subject != w.subject || c.Action != w.action {
			t.Errorf("check %d = %q %s, want %q %s", i, c.Subject, c.Action, w.subject, w.action)
		}
		switch {
		case w.rule == "" && c.Rule != nil:
			t.Errorf("check %d matched %v, want no rule", i, *c.Rule)
		case w.rule != "" && (c.Rule == nil || c.Rule.Pattern != w.rule):
			t.Errorf("check %d matched %v, want the rule %q", i, c.Rule, w.rule)
		}
	}
}

func TestExplainParseError(t *testing.T) {
	v := Explain(nil, Bash, "echo 'unterminated")
	if v.Action != Ask || v.Err == nil {
		t.Fatalf("Explain = %s, err %v; want ask with the parse error", v.Action, v.Err)
	}
	if len(v.Checks) != 1 || !strings.Contains(v.Checks[0].Reason, "does not parse") {
		t.Errorf("Checks = %+v, want one check whose reason has the parse error", v.Checks)
	}
	// A deny rule that matches the whole line still denies it.
	deny := []Rule{{Permission: Bash, Pattern: "rm *", Action: Deny}}
	if got := Evaluate(deny, Bash, "rm -rf / 'x"); got != Deny {
		t.Errorf("unparseable line matched by a deny rule = %s, want deny", got)
	}
}

func TestRuleValidate(t *testing.T) {
	valid := Rule{Permission: Bash, Pattern: "ls *", Action: Allow}
	if err := valid.Validate(); err != nil {
		t.Errorf("Validate(%v) = %v", valid, err)
	}
	for _, tt := range []struct {
		rule Rule
		want string
	}{
		{Rule{Pattern: "*", Action: Allow}, "permission is empty"},
		{Rule{Permission: Read, Action: Allow}, "pattern is empty"},
		{Rule{Permission: Read, Pattern: "*", Action: "always"}, `"always" is not one of allow, ask, deny`},
	} {
		err := tt.rule.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%#v) = %v, want an error saying %q", tt.rule, err, tt.want)
		}
	}
}

func TestParseAction(t *testing.T) {
	for _, s := range []string{"allow", "ask", "deny"} {
		if a, err := ParseAction(s); err != nil || string(a) != s {
			t.Errorf("ParseAction(%q) = %q, %v", s, a, err)
		}
	}
	if _, err := ParseAction("Allow"); err == nil {
		t.Errorf("ParseAction(%q) succeeded, want an error", "Allow")
	}
}

// Only a rule naming sandbox_escape allows it: "*" allow does not, as for
// protected_path; a "*" deny still denies it.
func TestOnlyARuleNamingItAllowsSandboxEscape(t *testing.T) {
	all := []Rule{{Permission: "*", Pattern: "*", Action: Allow}}
	if got := Evaluate(all, SandboxEscape, "cat ~/.ssh/id_rsa"); got != Ask {
		t.Errorf(`"*" allow on sandbox_escape: %s, want ask`, got)
	}
	if got := Evaluate(all, Bash, "ls"); got != Allow {
		t.Errorf(`"*" allow on bash: %s, want allow`, got)
	}
	named := append(all, Rule{Permission: SandboxEscape, Pattern: "make *", Action: Allow})
	if got := Evaluate(named, SandboxEscape, "make test"); got != Allow {
		t.Errorf("a sandbox_escape rule: %s, want allow", got)
	}
	if got := Evaluate([]Rule{{Permission: "*", Pattern: "*", Action: Deny}}, SandboxEscape, "x"); got != Deny {
		t.Errorf(`"*" deny on sandbox_escape: %s, want deny`, got)
	}
}
