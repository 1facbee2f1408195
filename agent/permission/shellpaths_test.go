package permission

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"testing"
)

// TestPathsAsTheShellReadsThem: the words bash expands to a known
// directory are paths from it; the rest stay questions.
func TestPathsAsTheShellReadsThem(t *testing.T) {
	tests := []struct {
		word string
		want Path
	}{
		{`~/.ssh/id_rsa`, Path{Text: "/.ssh/id_rsa", Home: true}},
		{`$HOME/.ssh/id_rsa`, Path{Text: "/.ssh/id_rsa", Home: true}},
		{`${HOME}/.ssh`, Path{Text: "/.ssh", Home: true}},
		{`"$HOME/.ssh/a b"`, Path{Text: "/.ssh/a b", Home: true}},
		{`"${HOME}"/.ssh`, Path{Text: "/.ssh", Home: true}},
		{`$HOME`, Path{Text: "", Home: true}},
		{`$PWD/../x`, Path{Text: "./../x"}},
		{`"$OLDPWD"/x`, Path{Text: "./x"}},
		{`~+/x`, Path{Text: "./x"}},
		{`~-`, Path{Text: "."}},
		{`~no-such-user-zz/x`, Path{Text: "~no-such-user-zz/x"}},
		{`$HOMEX/x`, Path{Text: "$HOMEX/x", Expand: "the shell expands it at run time"}},
		{`${HOME:-/}/x`, Path{Text: "${HOME:-/}/x", Expand: "the shell expands it at run time"}},
		{`$HOME$X`, Path{Text: "$HOME$X", Expand: "the shell expands it at run time"}},
		{`"$HOME"x`, Path{Text: `"$HOME"x`, Expand: "the shell expands it at run time"}},
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) && u.Username != "" {
		tests = append(tests, struct {
			word string
			want Path
		}{"~" + u.Username + "/x", Path{Text: filepath.ToSlash(u.HomeDir) + "/x"}})
	}
	for _, tt := range tests {
		cmds, err := SplitBash("cat " + tt.word)
		if err != nil || len(cmds) != 1 {
			t.Fatalf("SplitBash(cat %s) = %v, %v", tt.word, cmds, err)
		}
		var got *Path
		for i := range cmds[0].Paths {
			if p := cmds[0].Paths[i]; p.Text != "cat" {
				got = &p
				break
			}
		}
		if got == nil || got.Text != tt.want.Text || got.Home != tt.want.Home || got.Expand != tt.want.Expand {
			t.Errorf("cat %s: path %+v, want %+v", tt.word, got, tt.want)
		}
	}
}

// TestHomeRulesMatchTheAbsoluteHome: a rule written with ~/, $HOME/ or
// ${HOME}/ decides the same files as one written with the real home,
// for the file tools and for commands.
func TestHomeRulesMatchTheAbsoluteHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	real, _ := filepath.EvalSymlinks(home)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	root := filepath.Join(home, "ws")
	os.MkdirAll(root, 0o755)
	for _, pattern := range []string{"~/.ssh/**", "$HOME/.ssh/**", "${HOME}/.ssh/**", real + "/.ssh/**"} {
		rules := append(Defaults(), Rule{Permission: Bash, Pattern: "*", Action: Allow},
			Rule{Permission: ExternalDirectory, Pattern: "*", Action: Allow},
			Rule{Permission: ExternalDirectory, Pattern: pattern, Action: Deny})
		c := newChecker(t, Options{Root: root, Rules: rules})
		for _, call := range []Call{
			{Permission: Read, Subjects: []string{filepath.Join(real, ".ssh", "id_rsa")}},
			bash("cat ~/.ssh/id_rsa"),
			bash("cat $HOME/.ssh/id_rsa"),
			bash("cat " + real + "/.ssh/id_rsa"),
		} {
			if err := c.Check(t.Context(), call); !errors.Is(err, ErrDenied) {
				t.Errorf("rule %s: %s %v: %v, want denied", pattern, call.Permission, call.Subjects, err)
			}
		}
		if err := c.Check(t.Context(), bash("cat ~/notes.txt")); err != nil {
			t.Errorf("rule %s: cat ~/notes.txt: %v, want allowed", pattern, err)
		}
	}
}
