package prompt_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/prompt"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares a prompt, described by describe, with testdata/name.
// The fixture's temporary directories and the OS are replaced by stable
// names first, so sizes do not vary with the temporary path.
func golden(t *testing.T, f *fixture, name string, p prompt.Prompt) {
	t.Helper()
	stable := strings.NewReplacer(f.home, "$HOME", f.repo, "$REPO", "- OS: "+runtime.GOOS+"\n", "- OS: $GOOS\n")
	norm := prompt.Prompt{Stable: p.Stable}
	for _, part := range p.Parts {
		part.Path = stable.Replace(part.Path)
		part.Text = stable.Replace(part.Text + "\n")
		part.Text = strings.TrimSuffix(part.Text, "\n")
		norm.Parts = append(norm.Parts, part)
	}
	got := describe(norm)
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the built prompt (go test -update rewrites it); got:\n%s", path, got)
	}
}

// describe renders a prompt for a golden file: the parts, the cache
// breakpoint, then the text.
func describe(p prompt.Prompt) string {
	var sb strings.Builder
	sb.WriteString("# parts (kind, file, estimated tokens)\n")
	for i, part := range p.Parts {
		if i == p.Stable {
			sb.WriteString("-- cache breakpoint --\n")
		}
		fmt.Fprintf(&sb, "%s %s %d\n", part.Kind, part.Path, prompt.EstimateTokens(part.Text))
	}
	fmt.Fprintf(&sb, "# text: %d bytes, about %d tokens\n", len(p.Text()), p.Tokens())
	sb.WriteString(p.Text())
	sb.WriteString("\n")
	return sb.String()
}

// TestBuildGolden builds a prompt from every source at once: global
// instructions, instruction files in the repository root and in the
// workspace below it, configured files, skills and git state.
func TestBuildGolden(t *testing.T) {
	f := newFixture(t)
	f.root = filepath.Join(f.repo, "svc")
	f.write(filepath.Join(f.userDir(), "AGENTS.md"), "Answer in British English.\n")
	f.write(filepath.Join(f.home, ".claude", "CLAUDE.md"), "Not read: darman's own global file wins.\n")
	f.write(filepath.Join(f.repo, "AGENTS.md"), "# Monorepo\n\nRun `make check` before finishing.\n")
	f.write(filepath.Join(f.repo, "CLAUDE.md"), "Not read: AGENTS.md is beside it.\n")
	f.write("CLAUDE.md", "The svc service: Go 1.26, no cgo.\n")
	f.write("docs/style.md", "Errors wrap with %w.\n")
	f.write("docs/api/rules.md", "Handlers stay under 60 lines.\n")
	f.write("docs/notes.txt", "not Markdown, not matched\n")

	opts := f.options()
	opts.Instructions = []string{"docs/**/*.md", "~/.config/darman/AGENTS.md"}
	opts.Skills = []prompt.Skill{
		{Name: "release", Description: "Cut a release: changelog, tag, publish."},
		{Name: "pdf", Description: "Read and fill PDF forms."},
	}
	opts.Git = fixedGit("feature/x", " M svc/main.go\n?? svc/new.go\nA  docs/api/rules.md", nil)
	p := f.build(opts)
	if len(p.Problems) > 0 {
		t.Errorf("problems:\n%s", problemsText(p.Problems))
	}
	golden(t, f, "full.golden", p)
}

// TestBuildDefaultGolden is the prompt a workspace without instruction
// files or skills gets with the default tools: the floor every request pays.
func TestBuildDefaultGolden(t *testing.T) {
	f := newFixture(t)
	p := f.build(f.options())
	golden(t, f, "default.golden", p)
	t.Logf("default system prompt: %d bytes, about %d tokens (bytes/4)", len(p.Text()), p.Tokens())
}

func TestBuildOrderAndStablePrefix(t *testing.T) {
	f := newFixture(t)
	f.write(filepath.Join(f.userDir(), "AGENTS.md"), "global")
	f.write("AGENTS.md", "project")
	f.write("extra.md", "extra")
	opts := f.options()
	opts.Instructions = []string{"extra.md"}
	opts.Skills = []prompt.Skill{{Name: "s", Description: "d"}}
	p := f.build(opts)
	want := []string{"base", "global", "project", "extra", "skills", "environment"}
	if got := partKinds(p); !slices.Equal(got, want) {
		t.Fatalf("parts = %v; want %v", got, want)
	}
	if p.Stable != 5 {
		t.Errorf("Stable = %d; want 5 (everything before the environment)", p.Stable)
	}
	// The stable prefix does not move with the date, model or git state.
	opts2 := opts
	opts2.Now = opts.Now.AddDate(0, 0, 3)
	opts2.Model = "openai/gpt-5"
	opts2.Git = fixedGit("other", " M x.go", nil)
	p2 := f.build(opts2)
	if !slices.Equal(p.Parts[:p.Stable], p2.Parts[:p2.Stable]) {
		t.Errorf("the stable parts changed with date, model and git state")
	}
	if p.Parts[p.Stable].Text == p2.Parts[p2.Stable].Text {
		t.Errorf("the environment part did not change with date, model and git state")
	}
	if !strings.HasPrefix(p.Text(), p.Parts[0].Text) || !strings.HasSuffix(p.Text(), p.Parts[len(p.Parts)-1].Text) {
		t.Errorf("Text is not the parts in order")
	}
	if got, want := p.Tokens(), (len(p.Text())+3)/4; got != want {
		t.Errorf("Tokens = %d; want %d (bytes/4 rounded up)", got, want)
	}
}

func TestAgentsOverClaude(t *testing.T) {
	t.Run("both", func(t *testing.T) {
		f := newFixture(t)
		f.write("AGENTS.md", "from agents")
		f.write("CLAUDE.md", "from claude")
		text := f.build(f.options()).Text()
		if !strings.Contains(text, "Instructions from AGENTS.md:\n\nfrom agents") || strings.Contains(text, "from claude") {
			t.Errorf("want AGENTS.md alone when both exist; got:\n%s", text)
		}
	})
	t.Run("claude only", func(t *testing.T) {
		f := newFixture(t)
		f.write("CLAUDE.md", "from claude")
		text := f.build(f.options()).Text()
		if !strings.Contains(text, "Instructions from CLAUDE.md:\n\nfrom claude") {
			t.Errorf("want CLAUDE.md when there is no AGENTS.md; got:\n%s", text)
		}
	})
	t.Run("global falls back to ~/.claude/CLAUDE.md", func(t *testing.T) {
		f := newFixture(t)
		f.write(filepath.Join(f.home, ".claude", "CLAUDE.md"), "claude global")
		p := f.build(f.options())
		if got := partKinds(p); !slices.Contains(got, "global") || !strings.Contains(p.Text(), "Instructions from ~/.claude/CLAUDE.md:\n\nclaude global") {
			t.Errorf("want ~/.claude/CLAUDE.md as the global file; parts %v, text:\n%s", got, p.Text())
		}
		f.write(filepath.Join(f.userDir(), "AGENTS.md"), "darman global")
		text := f.build(f.options()).Text()
		if !strings.Contains(text, "darman global") || strings.Contains(text, "claude global") {
			t.Errorf("want darman's global AGENTS.md over ~/.claude/CLAUDE.md; got:\n%s", text)
		}
	})
	t.Run("UserDir option", func(t *testing.T) {
		f := newFixture(t)
		other := filepath.Join(f.home, "elsewhere")
		f.write(filepath.Join(other, "AGENTS.md"), "from the given dir")
		opts := f.options()
		opts.UserDir = other
		if text := f.build(opts).Text(); !strings.Contains(text, "from the given dir") {
			t.Errorf("Options.UserDir not used; got:\n%s", text)
		}
	})
	t.Run("walk up stops at the repository root", func(t *testing.T) {
		f := newFixture(t)
		f.write(filepath.Join(filepath.Dir(f.repo), "AGENTS.md"), "above the repository")
		f.write(filepath.Join(f.repo, "AGENTS.md"), "repository root")
		f.root = filepath.Join(f.repo, "a", "b")
		f.write(filepath.Join(f.root, "CLAUDE.md"), "workspace")
		p := f.build(f.options())
		text := p.Text()
		if strings.Contains(text, "above the repository") {
			t.Errorf("read an AGENTS.md above .git:\n%s", text)
		}
		i, j := strings.Index(text, "repository root"), strings.Index(text, "workspace\n")
		if i < 0 || j < 0 || i > j {
			t.Errorf("want the repository's file, then the workspace's (nearest last); got:\n%s", text)
		}
		if !strings.Contains(text, "Instructions from ../../AGENTS.md:") {
			t.Errorf("want the parent's file named relative to the workspace; got:\n%s", text)
		}
	})
}

func TestBuildMentionsOnlyOfferedTools(t *testing.T) {
	f := newFixture(t)
	opts := f.options()
	opts.Skills = []prompt.Skill{{Name: "pdf", Description: "PDF forms"}}
	full := f.build(opts).Parts[0].Text
	for _, tool := range []string{"edit", "write", "bash", "todo", "task", "skill"} {
		if !strings.Contains(full, " "+tool) {
			t.Errorf("with every tool, the instructions do not mention %s:\n%s", tool, full)
		}
	}

	opts.Tools = []string{"read", "grep", "glob", "list"}
	p := f.build(opts)
	base := p.Parts[0].Text
	for _, tool := range []string{"edit", "write", "bash", "todo", "task", "skill"} {
		if strings.Contains(base, " "+tool) {
			t.Errorf("read-only tools, yet the instructions mention %s:\n%s", tool, base)
		}
	}
	if slices.Contains(partKinds(p), "skills") {
		t.Errorf("skills listed without the skill tool")
	}
	if !strings.Contains(base, "ask before acting") || !strings.Contains(base, "concise") {
		t.Errorf("the tool-independent rules are missing:\n%s", base)
	}

	opts.Tools = []string{"read", "apply_patch"}
	if base := f.build(opts).Parts[0].Text; !strings.Contains(base, "apply_patch") {
		t.Errorf("with apply_patch and no edit, want apply_patch named:\n%s", base)
	}
	if len(full) > 1500 {
		t.Errorf("darman's own instructions are %d bytes; keep them under 1500", len(full))
	}
}

func TestGitFacts(t *testing.T) {
	f := newFixture(t)
	var lines []string
	for i := range 45 {
		lines = append(lines, fmt.Sprintf("?? file%02d.go", i))
	}
	lines[3] = " M " + strings.Repeat("x", 300)
	cases := []struct {
		name     string
		git      func(context.Context) (string, string, error)
		want     []string
		dontWant []string
	}{
		{"clean", fixedGit("main", "", nil), []string{"- Git: branch main, clean"}, nil},
		{"one change", fixedGit("dev", " M a.go\n", nil), []string{"- Git: branch dev, 1 changed path:\n   M a.go"}, nil},
		{"capped", fixedGit("main", strings.Join(lines, "\n"), nil),
			[]string{"45 changed paths:", "?? file19.go", "… and 25 more", strings.Repeat("x", 190) + "…"},
			[]string{"?? file20.go", strings.Repeat("x", 201)}},
		{"not a repository", fixedGit("", "", fmt.Errorf("/x: %w", prompt.ErrNotRepository)), []string{"- Git: not a repository"}, nil},
		{"git broken", fixedGit("", "", errors.New("exec: git: not found")), nil, []string{"- Git"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logger, logs := logBuffer()
			opts := f.options()
			opts.Git = c.git
			opts.Logger = logger
			p := f.build(opts)
			env := p.Parts[len(p.Parts)-1].Text
			for _, w := range c.want {
				if !strings.Contains(env, w) {
					t.Errorf("environment lacks %q:\n%s", w, env)
				}
			}
			for _, w := range c.dontWant {
				if strings.Contains(env, w) {
					t.Errorf("environment has %q:\n%s", w, env)
				}
			}
			if c.name == "git broken" && !strings.Contains(logs.String(), "git facts left out") {
				t.Errorf("a git failure was not logged; logs:\n%s", logs)
			}
		})
	}
}

func TestInstructionProblems(t *testing.T) {
	f := newFixture(t)
	big := strings.Repeat("Keep this line.\n", 5000) // 80,000 bytes
	f.write("AGENTS.md", big)
	f.write("bin.md", "\x00\x01binary")
	opts := f.options()
	opts.Instructions = []string{"missing.md", "nothing/*.md", "bin.md", "[", "AGENTS.md"}
	logger, logs := logBuffer()
	opts.Logger = logger
	p := f.build(opts)
	probs := problemsText(p.Problems)
	for _, w := range []string{
		"missing.md: no such file",
		"nothing/*.md: the pattern matches no file",
		"bin.md: binary file",
		"[: bad pattern",
		"AGENTS.md: longer than 65536 bytes",
	} {
		if !strings.Contains(probs, w) {
			t.Errorf("problems lack %q:\n%s", w, probs)
		}
	}
	if !strings.Contains(logs.String(), "instruction file skipped or cut") {
		t.Errorf("problems not logged")
	}
	var agents []prompt.Part
	for _, part := range p.Parts {
		if strings.HasSuffix(part.Path, "AGENTS.md") {
			agents = append(agents, part)
		}
	}
	if len(agents) != 1 {
		t.Fatalf("AGENTS.md is in the prompt %d times; want once although it is also configured", len(agents))
	}
	text := agents[0].Text
	if len(text) > 66<<10 || !strings.Contains(text, "Keep this line.\n\n[AGENTS.md is cut here:") || !strings.HasSuffix(text, "read the file for the rest]") {
		t.Errorf("a long AGENTS.md is not cut at a line with a note: %d bytes, ends %q", len(text), text[len(text)-100:])
	}
}

func TestBuildErrors(t *testing.T) {
	f := newFixture(t)
	for _, root := range []string{"", "relative/dir", filepath.Join(f.repo, "missing"), f.write("file", "x")} {
		opts := f.options()
		opts.Root = root
		if _, err := prompt.Build(context.Background(), opts); err == nil {
			t.Errorf("Build with root %q: no error", root)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := prompt.Build(ctx, f.options()); !errors.Is(err, context.Canceled) {
		t.Errorf("Build with a cancelled context: %v; want context.Canceled", err)
	}
}

func TestDirInstructions(t *testing.T) {
	f := newFixture(t)
	f.write("AGENTS.md", "root: already in the system prompt")
	f.write("a/AGENTS.md", "a")
	f.write("a/b/CLAUDE.md", "b")
	f.write("a/b/c/AGENTS.md", "c agents")
	f.write("a/b/c/CLAUDE.md", "c claude")
	file := f.write("a/b/c/d/main.go", "package d")

	got := prompt.DirInstructions(f.root, file)
	var names []string
	for _, in := range got {
		rel, _ := filepath.Rel(f.root, in.Path)
		names = append(names, filepath.ToSlash(rel))
	}
	want := []string{"a/AGENTS.md", "a/b/CLAUDE.md", "a/b/c/AGENTS.md"}
	if !slices.Equal(names, want) {
		t.Fatalf("DirInstructions = %v; want %v (nearest last, AGENTS.md over CLAUDE.md, root excluded)", names, want)
	}
	if got[1].Text != "Instructions from a/b/CLAUDE.md:\n\nb" {
		t.Errorf("Text = %q", got[1].Text)
	}

	// A relative path, a directory, and a file that no longer exists.
	for _, p := range []string{"a/b/c/d/main.go", filepath.Join(f.root, "a", "b", "c", "d"), "a/b/c/d/gone.go"} {
		if got := prompt.DirInstructions(f.root, p); len(got) != 3 {
			t.Errorf("DirInstructions(%q) gave %d files; want 3", p, len(got))
		}
	}
	if got := prompt.DirInstructions(f.root, "a/b"); len(got) != 2 {
		t.Errorf("DirInstructions of directory a/b gave %d files; want a's and b's", len(got))
	}
	for _, p := range []string{"main.go", filepath.Join(f.home, "x.go"), "../elsewhere/x.go"} {
		if got := prompt.DirInstructions(f.root, p); got != nil {
			t.Errorf("DirInstructions(%q) = %v; want none for the root itself or outside it", p, got)
		}
	}
}

// TestBuildConcurrent builds prompts for different tool sets at once: each
// must mention only its own tools.
func TestBuildConcurrent(t *testing.T) {
	f := newFixture(t)
	sets := [][]string{{"read"}, {"edit", "read"}, {"bash"}, {"todo"}}
	errs := make(chan error, 4*len(sets))
	for range 4 {
		for _, tools := range sets {
			go func() {
				opts := f.options()
				opts.Tools = tools
				p, err := prompt.Build(context.Background(), opts)
				if err != nil {
					errs <- err
					return
				}
				base := p.Parts[0].Text
				for tool, line := range map[string]string{"edit": "Change files with edit", "bash": "run the relevant tests", "todo": "keep a plan with todo"} {
					if strings.Contains(base, line) != slices.Contains(tools, tool) {
						errs <- fmt.Errorf("tools %v: instructions have %q: %v", tools, line, !slices.Contains(tools, tool))
						return
					}
				}
				errs <- nil
			}()
		}
	}
	for range 4 * len(sets) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
