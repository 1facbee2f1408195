package permission

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMSYSPath(t *testing.T) {
	for _, tc := range []struct {
		word, want string
		asked      bool
	}{
		{"/c/windows/win.ini", "C:/windows/win.ini", false},
		{"/c", "C:/", false},
		{"C:/windows", "C:/windows", false},
		{`C:\windows`, `C:\windows`, false},
		{"//server/share/x", `\\server\share\x`, false},
		{"src/main.go", "src/main.go", false},
		{"/dev/null", "", false},
		{"C:foo.txt", "", true},
		{"/usr/bin/env", "", true},
		{"/tmp/x", "", true},
		{"/etc/passwd", "", true},
		{"/", "", true},
	} {
		p, why := msysPath(tc.word)
		if p != tc.want || (why != "") != tc.asked {
			t.Errorf("msysPath(%q) = %q, %q; want %q, asked %v", tc.word, p, why, tc.want, tc.asked)
		}
	}
}

func TestMSYSAbs(t *testing.T) {
	for p, want := range map[string]bool{"C:/x": true, `C:\x`: true, "//srv/share/x": true, "./C:/x": false, "x": false, "C:x": false} {
		if got := msysAbs(p); got != want {
			t.Errorf("msysAbs(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestMSYSDir(t *testing.T) {
	for _, tc := range []struct {
		sub, want string
		asked     bool
	}{
		{"src", "src", false},
		{"./src/../lib", "./src/../lib", false},
		{"/c/windows", "C:/windows", false},
		{"./C:/windows", "C:/windows", false},
		{`./src/C:\windows`, `C:\windows`, false},
		{"./src//d/x", "./src//d/x", false}, // cd src && cd /d/x gives /d/x on its own
		{"/usr/lib", "", true},
		{"./C:foo/bar", "", true},
	} {
		d, why := msysDir(tc.sub)
		if d != tc.want || (why != "") != tc.asked {
			t.Errorf("msysDir(%q) = %q, %q; want %q, asked %v", tc.sub, d, why, tc.want, tc.asked)
		}
	}
}

// A Checker that reads bash lines as Git for Windows' bash asks about the
// paths MSYS maps outside the workspace, whatever OS the test runs on (the
// drive paths it maps to are judged on Windows: msys_windows_test.go).
func TestCheckerReadsGitBashPaths(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	rules := append(Defaults(), Rule{Permission: Edit, Pattern: "*", Action: Allow}, Rule{Permission: Bash, Pattern: "cd *", Action: Allow})
	for _, tc := range []struct {
		line string
		want string // the permission refused, "" when the line runs
	}{
		{"cat notes.txt", ""},
		{"cat notes.txt > /dev/null", ""},
		{"echo x > out.txt", ""},
		{"cat /etc/passwd", ExternalDirectory},
		{"cat /usr/share/*.txt", ExternalDirectory},
		{"cat C:notes.txt", ExternalDirectory},
		{"echo x > /tmp/x.txt", ExternalDirectory},
		{"echo x > C:x.txt", ExternalDirectory},
		{"cat < /etc/hosts", ExternalDirectory},
		{"cd /usr && cat notes.txt", ExternalDirectory},
		{"cd src && cat notes.txt", ""},
	} {
		c := newChecker(t, Options{Root: root, Rules: rules})
		c.windows = true
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

func TestPSPath(t *testing.T) {
	for word, asked := range map[string]bool{
		`C:\x\y.txt`: false, `C:/x`: false, `\\server\share\x`: false, `out.txt`: false, `..\x`: false,
		`\users\x.txt`: true, `/users/x.txt`: true, `C:x.txt`: true, `//./pipe/x`: true,
		`~\.ssh\authorized_keys`: true, `~`: true, `Temp:\x`: true, `FileSystem::C:\Users\me\x`: true, `HKCU:\Software\x`: true,
		`dir\a:b`: false,
	} {
		if why := psPath(word); (why != "") != asked {
			t.Errorf("psPath(%q) = %q, want asked %v", word, why, asked)
		}
	}
}

// On Windows a PowerShell redirection to \x or /x writes at the root of
// the current drive, not in the workspace: it is asked.
func TestCheckerReadsPowerShellRootedPaths(t *testing.T) {
	rules := append(Defaults(), Rule{Permission: Edit, Pattern: "*", Action: Allow}, Rule{Permission: Bash, Pattern: "write-output *", Action: Allow})
	for line, want := range map[string]string{
		"echo x > out.txt":         "",
		"echo x > /users/x.txt":    ExternalDirectory,
		`echo x > \users\x.txt`:    ExternalDirectory,
		"echo x 2>> C:notes.txt":   ExternalDirectory,
		"echo x > sub/../out2.txt": "",
	} {
		c := newChecker(t, Options{Rules: rules})
		c.windows = true
		err := c.Check(t.Context(), Call{Permission: Bash, Shell: PowerShell, Subjects: []string{line}})
		var denied *DeniedError
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v, want it allowed", line, err)
		case want != "" && (!errors.As(err, &denied) || denied.Permission != want):
			t.Errorf("%q: %v, want %s refused", line, err, want)
		}
	}
}
