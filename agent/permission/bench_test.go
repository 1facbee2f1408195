package permission

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// pipeline20 is a 20-command pipeline with paths, options and redirections
// of the kinds models write.
var pipeline20 = func() string {
	cmds := []string{
		`cat src/a.go`, `grep -n 'func ' -`, `sed -e 's/a/b/'`, `sort -u`, `uniq -c`,
		`head -n 50`, `tail -n +2`, `awk '{print $1}'`, `cut -d: -f1`, `tr a-z A-Z`,
		`grep -v -f/dev/null`, `rg --no-heading x`, `wc -l`, `tee out/log.txt`, `cat -n`,
		`grep --include=*.go -r x .`, `sort -k2 --field-separator=,`, `head -c 100`, `xxd -l 64`, `cat > out/final.txt`,
	}
	return strings.Join(cmds, " | ")
}()

// BenchmarkBashPipeline measures SplitBash and every path check of a
// 20-command pipeline through the Checker, on a real workspace.
func BenchmarkBashPipeline(b *testing.B) {
	root := b.TempDir()
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.MkdirAll(filepath.Join(root, "out"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "a.go"), []byte("package a"), 0o644)
	rules := append(benchRules(), Rule{Permission: Bash, Pattern: "*", Action: Allow}, Rule{Permission: Edit, Pattern: "*", Action: Allow})
	c, err := New(b.Context(), Options{Root: root, Rules: rules})
	if err != nil {
		b.Fatal(err)
	}
	call := Call{Permission: Bash, Subjects: []string{pipeline20}}
	if err := c.Check(b.Context(), call); err != nil {
		b.Fatal(err)
	}
	cpu := startCPU()
	for b.Loop() {
		if err := c.Check(b.Context(), call); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}

func BenchmarkSplitBashPipeline(b *testing.B) {
	cpu := startCPU()
	for b.Loop() {
		if _, err := SplitBash(pipeline20); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}
