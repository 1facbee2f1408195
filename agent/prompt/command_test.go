package prompt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/prompt"
)

func commandNames(cs []prompt.Command) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestLoadCommandsPrecedence(t *testing.T) {
	f := newFixture(t)
	f.root = filepath.Join(f.repo, "ws")
	f.write(".darman/command/review.md", "---\ndescription: nearest project\n---\nws review")
	f.write(filepath.Join(f.repo, ".darman", "command", "review.md"), "outer project")
	f.write(filepath.Join(f.repo, ".darman", "command", "deploy.md"), "outer deploy")
	f.write(filepath.Join(f.userDir(), "command", "review.md"), "user review")
	f.write(filepath.Join(f.userDir(), "command", "standup.md"), "user standup")
	f.write(".claude/commands/review.md", "claude review")
	f.write(".claude/commands/standup.md", "claude standup")
	f.write(".claude/commands/git/commit.md", "---\ndescription: Commit staged changes\nargument-hint: [message]\n---\ncommit $ARGUMENTS")
	f.write(filepath.Join(f.home, ".claude", "commands", "fmt.md"), "home claude fmt")
	f.write(filepath.Join(f.home, ".claude", "commands", "git", "commit.md"), "home claude commit")
	f.write(".darman/command/notes.txt", "not a command")
	f.write(".darman/command/.hidden.md", "skipped")

	cmds := prompt.LoadCommands(f.dirs())
	if len(cmds.Problems) > 0 {
		t.Errorf("problems:\n%s", problemsText(cmds.Problems))
	}
	want := []string{"deploy", "fmt", "git:commit", "review", "standup"}
	if got := commandNames(cmds.List()); !slices.Equal(got, want) {
		t.Fatalf("commands = %v; want %v", got, want)
	}
	for name, wantTemplate := range map[string]string{
		"review":     "ws review",
		"deploy":     "outer deploy",
		"standup":    "user standup",
		"git:commit": "commit $ARGUMENTS",
		"fmt":        "home claude fmt",
	} {
		c, ok := cmds.Get(name)
		if !ok || c.Template != wantTemplate {
			t.Errorf("Get(%q) = %q, %v; want template %q", name, c.Template, ok, wantTemplate)
		}
	}
	review, _ := cmds.Get("review")
	if review.Origin != prompt.Project || review.Description != "nearest project" {
		t.Errorf("review: origin %v, description %q", review.Origin, review.Description)
	}
	standup, _ := cmds.Get("standup")
	commit, _ := cmds.Get("git:commit")
	if standup.Origin != prompt.User || commit.Origin != prompt.Claude || commit.ArgumentHint != "[message]" || commit.Description != "Commit staged changes" {
		t.Errorf("standup origin %v; git:commit origin %v, hint %q, description %q", standup.Origin, commit.Origin, commit.ArgumentHint, commit.Description)
	}

	var shadowed []string
	for _, s := range cmds.Shadowed {
		by, _ := filepath.Rel(filepath.Dir(f.repo), s.By)
		path, _ := filepath.Rel(filepath.Dir(f.repo), s.Path)
		shadowed = append(shadowed, fmt.Sprintf("%s: %s by %s", s.Name, filepath.ToSlash(path), filepath.ToSlash(by)))
	}
	wantShadowed := []string{
		"review: repo/.darman/command/review.md by repo/ws/.darman/command/review.md",
		"review: home/.config/darman/command/review.md by repo/ws/.darman/command/review.md",
		"review: repo/ws/.claude/commands/review.md by repo/ws/.darman/command/review.md",
		"standup: repo/ws/.claude/commands/standup.md by home/.config/darman/command/standup.md",
		"git:commit: home/.claude/commands/git/commit.md by repo/ws/.claude/commands/git/commit.md",
	}
	if !slices.Equal(shadowed, wantShadowed) {
		t.Errorf("shadowed:\n%s\nwant:\n%s", strings.Join(shadowed, "\n"), strings.Join(wantShadowed, "\n"))
	}
}

func TestLoadCommandsProblems(t *testing.T) {
	f := newFixture(t)
	f.write(".darman/command/ok.md", "fine")
	f.write(".darman/command/unclosed.md", "---\ndescription: x\nbody without a closing line")
	f.write(".darman/command/dup.md", "---\nmodel: a\nmodel: b\n---\nbody")
	f.write(".darman/command/has space.md", "x")
	f.write(".darman/command/bin.md", "\x00\x00")
	cmds := prompt.LoadCommands(f.dirs())
	if got := commandNames(cmds.List()); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("commands = %v; want only ok", got)
	}
	probs := problemsText(cmds.Problems)
	for _, w := range []string{
		"unclosed.md: the front matter opened by --- on line 1 has no closing --- line",
		`dup.md: line 3: key "model" appears twice (first on line 2)`,
		`has space.md: the command name "has space" has white space`,
		"bin.md: binary file",
	} {
		if !strings.Contains(probs, w) {
			t.Errorf("problems lack %q:\n%s", w, probs)
		}
	}
}

// shell is a Run function that runs the command with sh, as the loop's
// bash tool would (without its permission check).
func shell(ctx context.Context, command string) (string, error) {
	out, err := exec.CommandContext(ctx, "sh", "-c", command).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

func loadCommand(t *testing.T, f *fixture, name, content string) prompt.Command {
	t.Helper()
	f.write(filepath.Join(".darman", "command", name+".md"), content)
	c, ok := prompt.LoadCommands(f.dirs()).Get(name)
	if !ok {
		t.Fatalf("command %s not loaded", name)
	}
	return c
}

func TestExpand(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	f := newFixture(t)
	f.write("main.go", "package main\n\nfunc main() {}\n")
	f.write("doc.md", "Use ```go fences``` and @other and !`date`.\n")
	f.write("dir/file name.txt", "x")
	cases := []struct {
		name, template, args, want string
	}{
		{"arguments", "Review $ARGUMENTS now.", "  the parser  ", "Review the parser now."},
		{"positional", "from $1 to $2", "a b", "from a to b"},
		{"last takes the rest", "title: $1\nbody: $2", `"Fix it" the parser "is broken"`, "title: Fix it\nbody: the parser is broken"},
		{"missing", "[$1] [$2] [$3]", "only", "[only] [] []"},
		{"repeated", "$1 and $1 then $2", "x y z", "x and x then y z"},
		{"both kinds", "$1 | $ARGUMENTS", "'a b' c", "a b c | 'a b' c"},
		{"apostrophe", "$1", "don't stop", "don't stop"},
		{"not placeholders", "cost $0, $x, $ and $$", "a", "cost $0, $x, $ and $$"},
		{"file", "See @main.go.", "", "See\nmain.go:\n```\npackage main\n\nfunc main() {}\n```\n."},
		{"file mid-sentence", "Compare @main.go with @doc.md please", "", "Compare\nmain.go:\n```\npackage main\n\nfunc main() {}\n```\nwith\ndoc.md:\n````\nUse ```go fences``` and @other and !`date`.\n````\nplease"},
		{"file on its own line", "Code:\n@main.go\nEnd", "", "Code:\nmain.go:\n```\npackage main\n\nfunc main() {}\n```\nEnd"},
		{"file from arguments", "Explain $1", "@main.go", "Explain\nmain.go:\n```\npackage main\n\nfunc main() {}\n```"},
		{"not re-expanded, longer fence", "@doc.md", "", "doc.md:\n````\nUse ```go fences``` and @other and !`date`.\n````"},
		{"escaped and emails", `mail me@example.com or \@team, \!` + "`x`", "", "mail me@example.com or @team, !`x`"},
		{"bare @", "a @ b (@)", "", "a @ b (@)"},
		{"command", "Branch: !`printf 'dev\\n\\n'`.", "", "Branch: dev."},
		{"command with arguments", "!`echo $1`", "hello", "hello"},
		{"command output not re-expanded", "!`echo @main.go`", "", "@main.go"},
		{"unclosed command", "a !`b", "", "a !`b"},
		{"command across lines is not one", "!`a\nb`", "", "!`a\nb`"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := loadCommand(t, f, "t", c.template)
			got, err := cmd.Expand(context.Background(), c.args, prompt.ExpandOptions{Root: f.root, Run: shell, Attachable: attachAny})
			if err != nil {
				t.Fatalf("Expand: %v", err)
			}
			if got != c.want {
				t.Errorf("Expand(%q, %q) =\n%s\nwant:\n%s", c.template, c.args, got, c.want)
			}
		})
	}
}

func TestExpandErrors(t *testing.T) {
	f := newFixture(t)
	f.write("bin.dat", "\x00\x01\x02")
	f.write("big.txt", strings.Repeat("x", 300<<10))
	f.write("main.txt", strings.Repeat("y", 200<<10))
	outside := f.write(filepath.Join(f.home, "secret.txt"), "secret")
	if err := os.Symlink(outside, filepath.Join(f.root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	ran := 0
	failing := func(ctx context.Context, command string) (string, error) {
		ran++
		return "", errors.New("exit status 3")
	}
	cases := []struct {
		name, template string
		run            func(context.Context, string) (string, error)
		want           string
	}{
		{"missing file", "see @docs/none.md", nil, "command /t: @docs/none.md: no such file (looked for " + filepath.Join(f.root, "docs", "none.md") + "); fix the path, or write \\@ for a literal @"},
		{"binary", "@bin.dat", nil, "command /t: @bin.dat: binary file, not text"},
		{"too large", "@big.txt", nil, "command /t: @big.txt: file too large: 307200 bytes, more than the 262144 read; name the file without @"},
		{"directory", "@.darman", nil, "command /t: @.darman: is a directory"},
		{"symlink out", "@link.txt", nil, "command /t: @link.txt: outside the workspace (it resolves to " + outside + ")"},
		{"relative out", "@../home/secret.txt", nil, "command /t: @../home/secret.txt: outside the workspace"},
		{"command fails", "a !`make lint` b", failing, "command /t: !`make lint` failed: exit status 3"},
		{"no runner", "!`date`", nil, "command /t: !`date`: running commands is not available here"},
		{"too much in all", strings.Repeat("@main.txt ", 12), nil, "command /t: the expanded message is over 2 MiB; inline fewer or smaller files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := loadCommand(t, f, "t", c.template)
			got, err := cmd.Expand(context.Background(), "", prompt.ExpandOptions{Root: f.root, Run: c.run, Attachable: attachAny})
			if err == nil {
				t.Fatalf("Expand(%q) = %q; want an error", c.template, got)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("Expand(%q) error:\n%v\nwant it to start:\n%s", c.template, err, c.want)
			}
		})
	}
	if ran != 1 {
		t.Errorf("the failing command ran %d times; want 1", ran)
	}
	cmd := loadCommand(t, f, "t", "@link.txt")
	_, err := cmd.Expand(context.Background(), "", prompt.ExpandOptions{Root: f.root})
	if !errors.Is(err, prompt.ErrOutsideWorkspace) {
		t.Errorf("error %v does not wrap ErrOutsideWorkspace", err)
	}
	wrapped := errors.New("denied by rule")
	cmd = loadCommand(t, f, "t", "!`rm -rf /`")
	_, err = cmd.Expand(context.Background(), "", prompt.ExpandOptions{Root: f.root, Run: func(context.Context, string) (string, error) { return "", wrapped }})
	if !errors.Is(err, wrapped) {
		t.Errorf("error %v does not wrap Run's error", err)
	}
}

// attachAny lets every file inside the workspace be attached, for the
// tests of what expansion does with an attached file.
func attachAny(_, path string) (string, error) { return path, nil }

// TestExpandAttachesNothingWithoutACheck: with no Attachable, an @path is
// refused with a clear error and its file goes nowhere.
func TestExpandAttachesNothingWithoutACheck(t *testing.T) {
	f := newFixture(t)
	f.write(".env", "API_KEY=sk-secret-0000\n")
	cmd := loadCommand(t, f, "t", "look at @.env")
	got, err := cmd.Expand(context.Background(), "", prompt.ExpandOptions{Root: f.root})
	if err == nil || !strings.Contains(err.Error(), "@.env: files cannot be attached here") {
		t.Errorf("Expand without Attachable: %q, %v", got, err)
	}
	if strings.Contains(got, "sk-secret") || (err != nil && strings.Contains(err.Error(), "sk-secret")) {
		t.Error("the file's contents came out")
	}
}

func TestExpandHooks(t *testing.T) {
	f := newFixture(t)
	var read, ran []string
	opts := prompt.ExpandOptions{
		Root:       f.root,
		Attachable: attachAny,
		ReadFile: func(ctx context.Context, path string) ([]byte, error) {
			read = append(read, path)
			if strings.HasSuffix(path, "gone.go") {
				return nil, os.ErrNotExist
			}
			return []byte("unsaved buffer of " + filepath.Base(path)), nil
		},
		Run: func(ctx context.Context, command string) (string, error) {
			ran = append(ran, command)
			return strings.Repeat("y", 70<<10), nil
		},
	}
	cmd := loadCommand(t, f, "t", "@a.go\n!`yes | head`")
	got, err := cmd.Expand(context.Background(), "", opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "a.go:\n```\nunsaved buffer of a.go\n```\n") {
		t.Errorf("ReadFile's contents not inlined:\n%.200s", got)
	}
	if !strings.HasSuffix(got, "\n[output truncated: 6144 more bytes]") || len(got) > 70<<10 {
		t.Errorf("long command output not capped: %d bytes, ends %q", len(got), got[len(got)-60:])
	}
	if !slices.Equal(read, []string{filepath.Join(f.root, "a.go")}) || !slices.Equal(ran, []string{"yes | head"}) {
		t.Errorf("ReadFile got %v, Run got %v", read, ran)
	}
	cmd = loadCommand(t, f, "t", "@gone.go")
	if _, err := cmd.Expand(context.Background(), "", opts); err == nil || !strings.Contains(err.Error(), "@gone.go: no such file") {
		t.Errorf("a file ReadFile cannot find: %v", err)
	}
}

func TestExpandCancelled(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	run := func(ctx context.Context, command string) (string, error) {
		calls++
		cancel()
		return "out", nil
	}
	cmd := loadCommand(t, f, "t", "!`one` !`two`")
	if _, err := cmd.Expand(ctx, "", prompt.ExpandOptions{Root: f.root, Run: run}); !errors.Is(err, context.Canceled) {
		t.Errorf("Expand after cancel: %v; want context.Canceled", err)
	}
	if calls != 1 {
		t.Errorf("Run called %d times after the context was cancelled; want 1", calls)
	}
}

func TestSplitArgs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  \t\n ", nil},
		{"a b  c", []string{"a", "b", "c"}},
		{`"a b" c`, []string{"a b", "c"}},
		{`'a "b"' c`, []string{`a "b"`, "c"}},
		{`"a \"quoted\" word"`, []string{`a "quoted" word`}},
		{`"a"'b c'd`, []string{"ab cd"}},
		{`don't stop`, []string{"don't", "stop"}},
		{`it's "two words"`, []string{"it's", "two words"}},
		{`"unclosed quote`, []string{`"unclosed`, "quote"}},
		{`a\ b c`, []string{"a b", "c"}},
		{`C:\dir\file`, []string{`C:\dir\file`}},
		{`\"x\"`, []string{`"x"`}},
		{`--msg="a b"`, []string{`--msg="a`, `b"`}},
		{`""`, []string{""}},
		{"é ü\u00a0x", []string{"é", "ü", "x"}},
	}
	for _, c := range cases {
		if got := prompt.SplitArgs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("SplitArgs(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
