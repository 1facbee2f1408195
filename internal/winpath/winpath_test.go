package winpath

import "testing"

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		`c:\Users\me\`:                `C:\Users\me`,
		`C:/Users/me/./src/../go.mod`: `C:\Users\me\go.mod`,
		`C:\..\..\x`:                  `C:\x`,
		`c:\`:                         `C:\`,
		`\\?\C:\Users\me`:             `C:\Users\me`,
		`\\?\c:\very\long\path`:       `C:\very\long\path`,
		`\??\C:\Windows`:              `C:\Windows`,
		`\\?\UNC\server\share\dir`:    `\\server\share\dir`,
		`\\?\unc\server\share`:        `\\server\share\`,
		`\\server\share\dir\..\x`:     `\\server\share\x`,
		`//server/share/dir`:          `\\server\share\dir`,
		`\\.\C:\x`:                    `C:\x`,
		`src\..\..\x`:                 `..\x`,
		`a\b\`:                        `a\b`,
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsAbs(t *testing.T) {
	for p, want := range map[string]bool{
		`C:\x`: true, `c:/x`: true, `\\server\share\x`: true, `\\?\C:\x`: true, `\\?\UNC\s\sh\x`: true,
		`C:x`: false, `x\y`: false, `\x`: false, ``: false,
	} {
		if got := IsAbs(p); got != want {
			t.Errorf("IsAbs(%q) = %v", p, got)
		}
	}
}

func TestWithin(t *testing.T) {
	root := `C:\Users\me\project`
	for p, want := range map[string]bool{
		`c:\users\ME\Project\src\a.go`:    true,
		`\\?\C:\Users\me\project\a.go`:    true,
		`C:\Users\me\project`:             true,
		`C:\Users\me\project2\a.go`:       false,
		`C:\Users\me\project\..\secret`:   false,
		`D:\Users\me\project\a.go`:        false,
		`\\server\share\Users\me\project`: false,
	} {
		if got := Within(root, p); got != want {
			t.Errorf("Within(%q, %q) = %v", root, p, got)
		}
	}
	if !Within(`\\server\share\proj`, `\\?\UNC\SERVER\share\proj\x`) {
		t.Error("a UNC path in its extended form is not within its root")
	}
}

func TestURIs(t *testing.T) {
	for uri, want := range map[string]string{
		"file:///c%3A/Users/me/My%20Project/main.go": `C:\Users\me\My Project\main.go`,
		"file:///C:/Users/me/main.go":                `C:\Users\me\main.go`,
		"file://server/share/dir/a.txt":              `\\server\share\dir\a.txt`,
		"file://localhost/C:/x":                      `C:\x`,
	} {
		got, err := FromURI(uri)
		if err != nil || got != want {
			t.Errorf("FromURI(%q) = %q, %v; want %q", uri, got, err, want)
		}
	}
	for _, bad := range []string{"untitled:Untitled-1", "file:///usr/lib/x", "file:///C:relative", "%zz"} {
		if got, err := FromURI(bad); err == nil {
			t.Errorf("FromURI(%q) = %q, want an error", bad, got)
		}
	}
	for p, want := range map[string]string{
		`C:\Users\me\My Project\a#1.go`: "file:///C:/Users/me/My%20Project/a%231.go",
		`\\?\c:\x`:                      "file:///C:/x",
		`\\server\share\dir\a.txt`:      "file://server/share/dir/a.txt",
		`\\?\UNC\server\share\a`:        "file://server/share/a",
	} {
		if got := ToURI(p); got != want {
			t.Errorf("ToURI(%q) = %q, want %q", p, got, want)
		}
	}
	// A round trip gives the path back in its clean form.
	for _, p := range []string{`C:\Users\me\é\x y.go`, `\\server\share\a b\c`} {
		if back, err := FromURI(ToURI(p)); err != nil || back != p {
			t.Errorf("FromURI(ToURI(%q)) = %q, %v", p, back, err)
		}
	}
}

func TestFromMSYS(t *testing.T) {
	for _, tc := range []struct {
		word, want string
		form       Form
	}{
		{`/c/windows/win.ini`, `C:/windows/win.ini`, Absolute},
		{`/C/Users/me`, `C:/Users/me`, Absolute},
		{`/z//etc/passwd`, `Z:/etc/passwd`, Absolute},
		{`/c`, `C:/`, Absolute},
		{`/d/`, `D:/`, Absolute},
		{`C:/windows`, `C:/windows`, Absolute},
		{`c:\windows\win.ini`, `c:\windows\win.ini`, Absolute},
		{`//server/share/dir`, `\\server\share\dir`, Absolute},
		{`\\server\share`, `\\server\share\`, Absolute},
		{`\\?\C:\x`, `C:\x`, Absolute},
		{`//?/C:/ws/.git/hooks/x`, `C:\ws\.git\hooks\x`, Absolute},
		{`\\?\UNC\srv\share\x`, `\\srv\share\x`, Absolute},
		{`/c/x/../y`, `C:/y`, Absolute},
		{`/c/..`, `/c/..`, Unmapped},
		{`/c/../tmp/p/f`, `/c/../tmp/p/f`, Unmapped},
		{`/d/../etc/profile.d/x.sh`, `/d/../etc/profile.d/x.sh`, Unmapped},
		{`/dev/null`, `NUL`, Null},
		{`C:foo.txt`, `C:foo.txt`, DriveRelative},
		{`C:`, `C:`, DriveRelative},
		{`\windows`, `\windows`, DriveRelative},
		{`/usr/bin/bash`, `/usr/bin/bash`, Unmapped},
		{`/etc/passwd`, `/etc/passwd`, Unmapped},
		{`/tmp`, `/tmp`, Unmapped},
		{`/`, `/`, Unmapped},
		{`/dev/stdout`, `/dev/stdout`, Unmapped},
		{`/cd/x`, `/cd/x`, Unmapped},
		{`/c:/x`, `/c:/x`, Unmapped},
		{`/cygdrive/c/x`, `/cygdrive/c/x`, Unmapped},
		{`///c/x`, `///c/x`, Unmapped},
		{`\\.\pipe\x`, `\\.\pipe\x`, Unmapped},
		{`src/main.go`, `src/main.go`, Relative},
		{`../x`, `../x`, Relative},
		{`./C:/windows`, `./C:/windows`, Relative},
		{`-n`, `-n`, Relative},
		{``, ``, Relative},
	} {
		got, form := FromMSYS(tc.word)
		if got != tc.want || form != tc.form {
			t.Errorf("FromMSYS(%q) = %q, %d; want %q, %d", tc.word, got, form, tc.want, tc.form)
		}
	}
	// What a drive path maps to is the Windows path darman compares.
	if p, _ := FromMSYS(`/c/Users/me/../x`); Clean(p) != `C:\Users\x` {
		t.Errorf("Clean(FromMSYS(/c/Users/me/../x)) = %q, want C:\\Users\\x", Clean(p))
	}
}
