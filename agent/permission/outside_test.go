package permission

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOutside(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	elsewhere := filepath.Join(base, "elsewhere")
	for _, d := range []string{filepath.Join(root, "src", "deep"), elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(root, "src", "a.go"))
	writeFile(t, filepath.Join(elsewhere, "secret"))
	symlink(t, elsewhere, filepath.Join(root, "out"))                 // a directory link leading out
	symlink(t, filepath.Join(root, "src"), filepath.Join(root, "in")) // a link that stays in
	symlink(t, filepath.Join(elsewhere, "secret"), filepath.Join(root, "secret-link"))
	symlink(t, "../elsewhere", filepath.Join(root, "rel-out"))               // relative target
	symlink(t, filepath.Join(root, "src"), filepath.Join(elsewhere, "back")) // from outside into the workspace
	symlink(t, filepath.Join(root, "loop"), filepath.Join(root, "loop"))

	tests := []struct {
		path string
		want bool
	}{
		{"src/a.go", false},
		{filepath.Join(root, "src", "a.go"), false},
		{".", false},
		{root, false},
		{"src/new-file.go", false},        // does not exist yet
		{"src/missing/dir/new.go", false}, // several missing levels
		{"in/a.go", false},                // a link inside the workspace
		{"../elsewhere/secret", true},
		{"src/../../elsewhere/secret", true},
		{filepath.Join(elsewhere, "secret"), true},
		{"/etc/passwd", true},
		{"out/secret", true},      // through a link
		{"out/not-yet.txt", true}, // a new file under a link that leads out
		{"out/new/dir/file", true},
		{"secret-link", true}, // a file link
		{"rel-out/secret", true},
		{"out/../ws/src/a.go", false}, // '..' applies where the link leads
		{filepath.Join(elsewhere, "back", "a.go"), false},
		{"src/missing/../../../elsewhere", true}, // lexical past a missing directory
		{"src/a.go/child", false},                // under a file: cannot exist, judged lexically
	}
	for _, tt := range tests {
		got, err := Outside(root, tt.path)
		if err != nil {
			t.Errorf("Outside(root, %q): %v", tt.path, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Outside(root, %q) = %v, want %v", tt.path, got, tt.want)
		}
	}

	// A symlinked root is judged by where it leads.
	linkedRoot := filepath.Join(base, "ws-link")
	symlink(t, root, linkedRoot)
	for path, want := range map[string]bool{
		"src/a.go":                         false,
		filepath.Join(root, "src", "a.go"): false,
		filepath.Join(linkedRoot, "src"):   false,
		"out/secret":                       true,
	} {
		if got, err := Outside(linkedRoot, path); err != nil || got != want {
			t.Errorf("Outside(linked root, %q) = %v, %v; want %v", path, got, err, want)
		}
	}

	for _, tt := range []struct {
		root, path, want string
	}{
		{root, "", "path is empty"},
		{"", "a", "root is empty"},
		{filepath.Join(base, "missing-root"), "a", "workspace root"},
		{root, "loop/x", "loop"},
	} {
		if _, err := Outside(tt.root, tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Outside(%q, %q) = %v, want an error about %q", tt.root, tt.path, err, tt.want)
		}
	}
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}
