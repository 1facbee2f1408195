package sandbox

import (
	"strings"
	"testing"
)

// The Seatbelt profile cannot run here (Linux); its text is what is
// checked: deny by default, home unreadable but for the listed
// directories, writes to the write trees but not the protected paths,
// network only when allowed, Unix sockets only inside the write trees.
func TestSeatbeltProfile(t *testing.T) {
	pol := Policy{
		ReadDirs:   []string{"/usr", "/Users/me/go", "/Users/me/.cargo/bin"},
		ReadFiles:  []string{"/Users/me/.gitconfig"},
		WriteDirs:  []string{"/Users/me/project", "/private/tmp/darman-1/s"},
		WriteFiles: []string{"/Users/me/project/.git/packed-refs"},
		Devices:    []string{"/dev/null"},
		ReadOnly:   []string{"/Users/me/project/.git/hooks", `/Users/me/project/we"ird`},
		Home:       "/Users/me",
	}
	p := SeatbeltProfile(pol)
	order := []string{
		"(version 1)", "(deny default)",
		`(allow file-read* (subpath "/"))`,
		`(deny file-read* (subpath "/Users/me"))`,
		`(subpath "/Users/me/go")`, `(literal "/Users/me/.gitconfig")`,
		"(allow file-read* file-write*", `(subpath "/Users/me/project")`, `(literal "/Users/me/project/.git/packed-refs")`,
		"(deny file-write*", `(subpath "/Users/me/project/.git/hooks")`, `(subpath "/Users/me/project/we\"ird")`,
		`(allow network* (remote unix-socket (subpath "/Users/me/project")`,
	}
	at := 0
	for _, want := range order {
		i := strings.Index(p[at:], want)
		if i < 0 {
			t.Fatalf("the profile lacks %q after offset %d:\n%s", want, at, p)
		}
		at += i
	}
	if strings.Contains(p, "(allow network*)") {
		t.Errorf("network allowed with Network false:\n%s", p)
	}
	if strings.Contains(p, `(subpath "/usr")`) {
		t.Errorf("a read dir outside home is listed again (it is covered by /):\n%s", p)
	}
	if open := strings.Count(p, "("); open != strings.Count(p, ")") {
		t.Errorf("unbalanced parentheses:\n%s", p)
	}
	pol.Network = true
	if p := SeatbeltProfile(pol); !strings.Contains(p, "(allow network*)") {
		t.Errorf("network not allowed with Network true:\n%s", p)
	}
}
