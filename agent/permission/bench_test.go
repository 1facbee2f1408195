package permission

import (
	"fmt"
	"testing"
)

// benchRules is the defaults plus a plausible configuration: about 60 rules.
func benchRules() []Rule {
	rules := Defaults()
	for _, p := range []string{"go test *", "go build *", "go vet *", "make *", "npm run test *",
		"npm run lint *", "cargo test *", "docker compose ps *", "gofmt *", "golangci-lint *"} {
		rules = append(rules, Rule{Permission: Bash, Pattern: p, Action: Allow})
	}
	for _, p := range []string{"rm -rf *", "git push *", "sudo *", "curl *", "wget *"} {
		rules = append(rules, Rule{Permission: Bash, Pattern: p, Action: Deny})
	}
	for i := range 10 {
		rules = append(rules, Rule{Permission: Edit, Pattern: fmt.Sprintf("generated/%d/**", i), Action: Deny})
	}
	return rules
}

func BenchmarkEvaluate(b *testing.B) {
	rules := benchRules()
	b.Logf("%d rules", len(rules))
	for _, bc := range []struct{ name, permission, subject string }{
		{"path", Edit, "internal/server/handlers/hover.go"},
		{"bash-simple", Bash, "go test ./..."},
		{"bash-compound", Bash, `git status && go vet ./... && go test -race -run 'TestX|TestY' ./agent/... 2>&1 | tail -n 50; echo "exit: $?" > /dev/null`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				Evaluate(rules, bc.permission, bc.subject)
			}
		})
	}
}

func BenchmarkSplitBash(b *testing.B) {
	line := `git status && go vet ./... && go test -race -run 'TestX|TestY' ./agent/... 2>&1 | tail -n 50; echo "exit: $?" > /dev/null`
	for b.Loop() {
		if _, err := SplitBash(line); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	for _, bc := range []struct {
		name, pattern, subject string
		path                   bool
	}{
		{"literal-prefix-miss", "git status *", "go test ./...", false},
		{"trailing-star", "go test *", "go test -race ./...", false},
		{"path-doublestar", "src/**/*.go", "src/a/b/c/d.go", true},
		{"pathological", "*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				match(bc.pattern, bc.subject, bc.path)
			}
		})
	}
}
