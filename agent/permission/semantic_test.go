package permission

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// semanticWorld is a home with a secret, and a workspace inside it whose
// symlinks lead out.
func semanticWorld(t *testing.T) (home, root string) {
	home = t.TempDir()
	t.Setenv("HOME", home)
	root = filepath.Join(home, "project")
	for _, d := range []string{".ssh", "project/src", "project/sub", "project/.git/hooks"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{".ssh/id_rsa": "KEY", "project/src/a.go": "package a", "project/go.mod": "module x"} {
		if err := os.WriteFile(filepath.Join(home, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"project/homelink": home,
		"project/keylink":  filepath.Join(home, ".ssh/id_rsa"),
		"project/sub/evil": "/etc/passwd",
		"project/hooks":    filepath.Join(root, ".git/hooks"),
	} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	return home, root
}

// readmeRules are Defaults plus the rules docs/security.md suggests and the ones
// finding 4 names, and a careless "allow every command".
func readmeRules(extra ...Rule) []Rule {
	rules := append(Defaults(),
		Rule{Permission: Edit, Pattern: "*", Action: Allow},
		Rule{Permission: Bash, Pattern: "go test *", Action: Allow},
		Rule{Permission: Bash, Pattern: "rm *", Action: Deny},
		Rule{Permission: Bash, Pattern: "echo *", Action: Allow},
		Rule{Permission: Bash, Pattern: "git status *", Action: Allow},
	)
	return append(rules, extra...)
}

func TestSemanticPathsAreAsked(t *testing.T) {
	_, root := semanticWorld(t)
	lines := []string{
		// Finding 1.
		`git status --untracked-files="$(< ~/.ssh/id_rsa)"`,
		`echo "$(< ~/.ssh/id_rsa)"`,
		`cat < ~/.ssh/id_rsa`,
		`wc -l 0< ../x`,
		// Finding 2.
		`grep -r --include=id_rsa '' ./..`,
		`rg TOPSECRET ./..`,
		`ls -la ./..`,
		`ls -la .//..`,
		`git diff --no-index --stat ./.. .`,
		`cat src/../../x`,
		// Finding 3.
		`rg --trace -f/etc/hostname zzz f.txt`,
		`grep -f/etc/hostname x`,
		`grep -xf/etc/hostname x`,
		`grep --file=/etc/hostname x`,
		`grep --file /etc/hostname x`,
		`head -c100 -- /etc/hostname`,
		// Finding 4.
		`echo $SECRET_TOKEN`,
		`echo "${SECRET_TOKEN}"`,
		`ls -la / ~ ../..`,
		`go test -exec 'sh -c "touch /tmp/x"' ./...`,
		`go test -toolexec=./evil ./...`,
		`go test -coverprofile=/tmp/cover.out ./...`,
		`go test -c -o /tmp/x.test ./...`,
		`go test -c -o=/tmp/x.test ./...`,
		// Symlinks that lead out.
		`cat homelink/.ssh/id_rsa`,
		`cat keylink`,
		`cat sub/evil`,
		`cd sub && cat evil`,
		`cat homelink/*/id_rsa`,
		`cat home*/.ssh/id_rsa`,
		// Expansions and quoting.
		`cat ~/.ssh/id_rsa`,
		`cat "$HOME/.ssh/id_rsa"`,
		`cat {src/a.go,/etc/passwd}`,
		`cat /etc/pass*`,
		`cat /e"t"c/passwd`,
		`cat '/etc/passwd'`,
		`cat $'/etc/passwd'`,
		"cat `echo /etc/passwd`",
		`cd; cat .ssh/id_rsa`,
		`cd ~ && cat .ssh/id_rsa`,
		`cd .. && cat x`,
		`dd if=/etc/passwd`,
		`git status -- ../`,
		`echo x=~/y`,
		// Dangerous options.
		`rg --pre sh x`,
		`git -c core.pager=sh status`,
		`git status --output=x`,
		`find . -exec sh -c id \;`,
		`find . -delete`,
		`xargs rm < list`,
		`env -S 'sh -c id'`,
		// Protected paths.
		`echo x > .git/hooks/pre-commit`,
		`echo x >> .git/config`,
		`echo x > hooks/post-checkout`,
		`echo '{}' > .claude/settings.json`,
		`echo '{}' | tee .mcp.json`,
		`git config core.hooksPath evil`,
		`git -C . config alias.st '!sh'`,
		`git config --global core.pager sh`,
		`cp evil.sh .git/hooks/post-checkout`,
		`mv x .envrc`,
		`sed -i 's/a/b/' .git/config`,
		`go build -o .git/hooks/pre-push ./cmd/x`,
		`touch .vscode/tasks.json`,
	}
	for _, rules := range map[string][]Rule{
		"readme":    readmeRules(),
		"every cmd": readmeRules(Rule{Permission: Bash, Pattern: "*", Action: Allow}),
	} {
		c := newChecker(t, Options{Root: root, Rules: rules})
		for _, line := range lines {
			err := c.Check(t.Context(), bash(line))
			if !errors.Is(err, ErrDenied) {
				t.Errorf("%q was allowed (err %v)", line, err)
			}
		}
	}
}

func TestSemanticPathsAllowOrdinaryCommands(t *testing.T) {
	_, root := semanticWorld(t)
	c := newChecker(t, Options{Root: root, Rules: readmeRules()})
	for _, line := range []string{
		`ls -la src`,
		`cat src/a.go go.mod`,
		`cat src/*.go`,
		`grep -rn TODO .`,
		`rg -n 'func main' -g '*.go' src`,
		`git status --untracked-files=no`,
		`git status --porcelain 2>/dev/null || true`,
		`go test -run 'TestX|TestY' -count=1 ./...`,
		`go test ./... 2>&1 | tail -n 50; echo "exit: $?"`,
		`echo hello > /dev/null`,
		`cat src/../go.mod`,
		`head -n1 < go.mod`,
		`echo "see /etc for details"`,
		`git log --format=%H -n 3`,
		`cat <(head -n1 go.mod) <(tail -n1 go.mod)`,
	} {
		if err := c.Check(t.Context(), bash(line)); err != nil {
			t.Errorf("%q: %v", line, err)
		}
	}
}

// An external_directory rule is what widens the workspace, and a
// protected_path rule what lets a protected file be written; bash rules
// cannot.
func TestSemanticOnlyTheirOwnRulesAllow(t *testing.T) {
	_, root := semanticWorld(t)
	rules := readmeRules(
		Rule{Permission: ExternalDirectory, Pattern: "/etc/**", Action: Allow},
		Rule{Permission: Bash, Pattern: "cat *", Action: Allow},
		Rule{Permission: ProtectedPath, Pattern: ".git/hooks/pre-commit", Action: Allow},
		Rule{Permission: Bash, Pattern: "go test -exec=./wrap *", Action: Allow},
	)
	c := newChecker(t, Options{Root: root, Rules: rules})
	for _, line := range []string{"cat /etc/hostname", "echo x > .git/hooks/pre-commit", "go test -exec=./wrap ./..."} {
		if err := c.Check(t.Context(), bash(line)); err != nil {
			t.Errorf("%q: %v", line, err)
		}
	}
	for _, line := range []string{"cat ~/.ssh/id_rsa", "echo x > .git/hooks/pre-push", "go test -exec=./other ./..."} {
		if err := c.Check(t.Context(), bash(line)); !errors.Is(err, ErrDenied) {
			t.Errorf("%q was allowed (%v)", line, err)
		}
	}
	// "*" for every permission is not an explicit protected_path rule.
	c = newChecker(t, Options{Root: root, Rules: append(readmeRules(), Rule{Permission: "*", Pattern: "*", Action: Allow})})
	if err := c.Check(t.Context(), Call{Permission: Edit, Subjects: []string{filepath.Join(root, ".git/config")}}); !errors.Is(err, ErrDenied) {
		t.Errorf("an edit of .git/config was allowed by \"*\": %v", err)
	}
}

// A worktree's .git is a file naming the real git directory; its config
// and hooks are protected there.
func TestProtectedThroughGitdirFile(t *testing.T) {
	home, _ := semanticWorld(t)
	gitdir := filepath.Join(home, "main.git", "worktrees", "w")
	root := filepath.Join(home, "w")
	os.MkdirAll(gitdir, 0o755)
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644)
	os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644)
	rules := readmeRules(Rule{Permission: ExternalDirectory, Pattern: "*", Action: Allow})
	c := newChecker(t, Options{Root: root, Rules: rules})
	for _, p := range []string{filepath.Join(gitdir, "config"), filepath.Join(home, "main.git", "hooks", "pre-commit"), filepath.Join(home, "main.git", "config")} {
		err := c.Check(t.Context(), Call{Permission: Edit, Subjects: []string{p}})
		var d *DeniedError
		if !errors.As(err, &d) || d.Permission != ProtectedPath {
			t.Errorf("edit of %s: %v, want a protected_path question", p, err)
		}
	}
}

// A protected path is asked even with edit allowed, with the call's diff
// and the reason; "always" grants that one path.
func TestProtectedAskShowsWhyAndGrantsOnePath(t *testing.T) {
	_, root := semanticWorld(t)
	asker := &scriptedAsker{t: t, replies: []Reply{{Answer: AllowAlways}, {Answer: RejectOnce}}}
	grants := &memGrants{}
	c := newChecker(t, Options{Root: root, Rules: readmeRules(), Asker: asker, Grants: grants})
	diff := map[string]any{"diff": "+fsmonitor = ./x"}
	if err := c.Check(t.Context(), Call{Permission: Edit, Subjects: []string{filepath.Join(root, ".git/config")}, Metadata: diff}); err != nil {
		t.Fatal(err)
	}
	reqs := asker.requests()
	if len(reqs) != 1 {
		t.Fatalf("asked %d times: %+v", len(reqs), reqs)
	}
	r := reqs[0]
	if r.Permission != ProtectedPath || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "core.fsmonitor") ||
		r.Metadata["diff"] == nil || !slices.Equal(r.Suggest, []string{".git/config"}) {
		t.Errorf("request = %+v", r)
	}
	if got := grants.stored(root); !slices.Equal(got, []Rule{{Permission: ProtectedPath, Pattern: ".git/config", Action: Allow}}) {
		t.Errorf("stored grants = %v", got)
	}
	// The grant covers .git/config only.
	if err := c.Check(t.Context(), Call{Permission: Edit, Subjects: []string{filepath.Join(root, ".git/config")}}); err != nil {
		t.Errorf("the granted path asks again: %v", err)
	}
	if err := c.Check(t.Context(), bash("echo x > .git/hooks/pre-commit")); !errors.Is(err, ErrDenied) {
		t.Errorf("a hook was written after granting .git/config: %v", err)
	}
	// Reading stays allowed.
	if err := c.Check(t.Context(), Call{Permission: Read, Subjects: []string{filepath.Join(root, ".git/config")}}); err != nil {
		t.Errorf("reading .git/config: %v", err)
	}
}

func TestProtectedPathsForTheSandbox(t *testing.T) {
	home, _ := semanticWorld(t)
	gitdir := filepath.Join(home, "main.git", "worktrees", "w")
	root := filepath.Join(home, "w")
	os.MkdirAll(gitdir, 0o755)
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644)
	os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644)
	got := ProtectedPaths(root)
	for _, want := range []string{
		filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".git", "config"), filepath.Join(root, ".mcp.json"),
		filepath.Join(root, ".claude", "settings.json"), filepath.Join(root, ".darman"), filepath.Join(root, ".vscode", "tasks.json"),
		filepath.Join(gitdir, "config"), filepath.Join(home, "main.git", "hooks"), filepath.Join(home, "main.git", "config"),
	} {
		if !slices.Contains(got, want) {
			t.Errorf("ProtectedPaths lacks %s:\n%s", want, strings.Join(got, "\n"))
		}
	}
}

// On Windows and macOS, whose file systems ignore case as they are
// usually formatted, a protected path written in another case is the
// same file: `.VSCODE/tasks.json` is the tasks VS Code runs. On Linux it
// is another file, and no question.
func TestProtectedPathsIgnoreCaseWhereTheFileSystemDoes(t *testing.T) {
	defer func(f bool) { foldProtected = f }(foldProtected)
	rules := append(Defaults(), Rule{Permission: Edit, Pattern: "*", Action: Allow},
		Rule{Permission: ProtectedPath, Pattern: "secrets/**", Action: Ask})
	for _, fold := range []bool{true, false} {
		foldProtected = fold
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755)
		c := newChecker(t, Options{Root: root, Rules: rules})
		for _, p := range []string{".VSCODE/tasks.json", ".Claude/settings.json", "DARMAN.json", ".Git/hooks/pre-commit", "Secrets/key", "sub/.ENVRC"} {
			err := c.Check(t.Context(), Call{Permission: Edit, Subjects: []string{filepath.Join(root, p)}})
			var d *DeniedError
			if asked := errors.As(err, &d) && d.Permission == ProtectedPath; asked != fold {
				t.Errorf("case folded %v: edit of %s: %v; want a protected_path question %v", fold, p, err, fold)
			}
		}
	}
}
