package permission

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On Windows (under Wine in the smoke suite) a bash line's paths are read
// as Git for Windows' bash reads them: /c/… is drive C:, so a file there
// is outside the workspace, and the workspace itself may be spelt /z/….
func TestCheckerJudgesGitBashDrivePaths(t *testing.T) {
	// Not t.TempDir: Wine's files cannot be removed the way its cleanup
	// removes them (unlinkat: Invalid function), which fails the test.
	root, err := os.MkdirTemp("", "darman-msys")
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(root, "notes.txt")
	t.Cleanup(func() { os.Remove(notes); os.Remove(root) })
	if err := os.WriteFile(notes, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	// C:\Users\me\project is /c/Users/me/project to Git bash.
	msysRoot := "/" + strings.ToLower(real[:1]) + filepath.ToSlash(real[2:])
	rules := append(Defaults(), Rule{Permission: Edit, Pattern: "*", Action: Allow}, Rule{Permission: Bash, Pattern: "cd *", Action: Allow}, Rule{Permission: Bash, Pattern: "tee *", Action: Allow})
	for _, tc := range []struct {
		line string
		want string // the permission refused, "" when the line runs
	}{
		{"cat notes.txt", ""},
		{"cat " + msysRoot + "/notes.txt", ""},
		{"echo x > " + msysRoot + "/out.txt", ""},
		{"cat /c/windows/win.ini", ExternalDirectory},
		{"cat /C/windows/win.ini", ExternalDirectory},
		{"cat /z/etc/passwd", ExternalDirectory},
		{"cat C:/windows/win.ini", ExternalDirectory},
		{`cat 'C:\windows\win.ini'`, ExternalDirectory},
		{"cat //server/share/x", ExternalDirectory},
		{"cat C:foo.txt", ExternalDirectory},
		{"cat /c/windows/*.ini", ExternalDirectory},
		{"echo x > /c/users/x.txt", ExternalDirectory},
		{"echo x >> /c/users/x.txt", ExternalDirectory},
		{"cat > /c/users/x.txt <<EOF\nx\nEOF", ExternalDirectory},
		{"tee /c/users/x.txt < notes.txt", ExternalDirectory},
		{"cd /c/windows && cat win.ini", ExternalDirectory},
		{"cd . && cd /c/windows && cat win.ini", ExternalDirectory},
		{"grep --file=/c/windows/win.ini notes.txt", ExternalDirectory},
		{"grep -f /c/windows/win.ini notes.txt", ExternalDirectory},
		{"cat ~/secret.txt", ExternalDirectory},
		{"cat /usr/share/x", ExternalDirectory},
		{"cat notes.txt > /dev/null", ""},
		// .. above a drive's root is Git bash's own root, not the drive's.
		{"echo x > /c/.." + msysRoot[2:] + "/out.txt", ExternalDirectory},
		{"echo x > " + strings.Repeat("../", strings.Count(msysRoot, "/")) + msysRoot[3:] + "/out.txt", ExternalDirectory},
		// The extended-length spelling of the workspace is the workspace:
		// its protected paths are protected.
		{"echo x > '\\\\?\\" + real + "\\darman.json'", ProtectedPath},
		{"echo x > //?/" + filepath.ToSlash(real) + "/out.txt", ""},
	} {
		c := newChecker(t, Options{Root: root, Rules: rules})
		err := c.Check(t.Context(), bash(tc.line))
		var denied *DeniedError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v, want it allowed", tc.line, err)
		case tc.want != "" && (!errors.As(err, &denied) || denied.Permission != tc.want):
			t.Errorf("%q: %v, want %s refused", tc.line, err, tc.want)
		}
	}
}
