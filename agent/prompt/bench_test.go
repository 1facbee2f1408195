package prompt_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/prompt"
)

// BenchmarkBuildDefault builds the default prompt (default tools, no
// instruction files or skills, git injected) and reports its size, the
// floor every request pays: bytes and tokens estimated as bytes/4.
func BenchmarkBuildDefault(b *testing.B) {
	f := newFixture(b)
	opts := f.options()
	var p prompt.Prompt
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if p, err = prompt.Build(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(p.Text())), "prompt-bytes")
	b.ReportMetric(float64(p.Tokens()), "prompt-tokens")
}

// BenchmarkBuildTypical adds a global file, two AGENTS.md files and ten
// skills, and runs git on a real (empty) repository as Build does by
// default when git is on PATH.
func BenchmarkBuildTypical(b *testing.B) {
	f := newFixture(b)
	f.write(filepath.Join(f.userDir(), "AGENTS.md"), strings.Repeat("A global preference, one line.\n", 5))
	f.write("AGENTS.md", strings.Repeat("A project rule about tests and style.\n", 30))
	f.root = filepath.Join(f.repo, "svc")
	f.write("AGENTS.md", strings.Repeat("A service rule.\n", 10))
	for i := range 10 {
		name := "skill" + string(rune('a'+i))
		f.write(filepath.Join(".darman", "skill", name, "SKILL.md"), skillFile(name, "Use when the task involves "+name+" and its files.", "body"))
	}
	opts := f.options()
	opts.Skills = prompt.LoadSkills(f.dirs(), nil).List()
	opts.Git = nil // GitStatus on the fixture's .git directory: not a repository to git.
	var p prompt.Prompt
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if p, err = prompt.Build(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(p.Text())), "prompt-bytes")
	b.ReportMetric(float64(p.Tokens()), "prompt-tokens")
}

func BenchmarkLoadCommands(b *testing.B) {
	f := newFixture(b)
	for i := range 20 {
		f.write(filepath.Join(".darman", "command", "c"+string(rune('a'+i))+".md"), "---\ndescription: a command\nargument-hint: [x]\n---\nDo $1 with $ARGUMENTS.\n")
	}
	d := f.dirs()
	b.ReportAllocs()
	for b.Loop() {
		if c := prompt.LoadCommands(d); len(c.List()) != 20 {
			b.Fatal("commands missing")
		}
	}
}

func BenchmarkExpand(b *testing.B) {
	f := newFixture(b)
	f.write("main.go", strings.Repeat("// a line of Go\n", 200))
	f.write(".darman/command/review.md", "---\ndescription: review\n---\nReview $1 for $2.\n\n@main.go\n\nStatus: !`git status`\n")
	cmd, _ := prompt.LoadCommands(f.dirs()).Get("review")
	opts := prompt.ExpandOptions{Root: f.root, Attachable: attachAny, Run: func(context.Context, string) (string, error) { return " M main.go\n", nil }}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cmd.Expand(context.Background(), `main.go "error handling and naming"`, opts); err != nil {
			b.Fatal(err)
		}
	}
}
