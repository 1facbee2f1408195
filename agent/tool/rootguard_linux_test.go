//go:build linux

package tool

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestQuarantineAcrossFileSystems: a workspace and a data directory on
// different file systems (no rename between them): what is moved aside
// arrives whole, files, links and folders, and only then leaves the
// workspace.
func TestQuarantineAcrossFileSystems(t *testing.T) {
	ws := t.TempDir()
	shm, err := os.MkdirTemp("/dev/shm", "darman-quarantine-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	var a, b syscall.Stat_t
	if syscall.Stat(ws, &a) != nil || syscall.Stat(shm, &b) != nil || a.Dev == b.Dev {
		t.Skip("the temp dir and /dev/shm are one file system here")
	}
	made := filepath.Join(ws, ".husky")
	os.MkdirAll(filepath.Join(made, "_"), 0o755)
	os.WriteFile(filepath.Join(made, "pre-commit"), []byte("planted\n"), 0o755)
	os.WriteFile(filepath.Join(made, "_", "h"), []byte("inner\n"), 0o644)
	os.Symlink("pre-commit", filepath.Join(made, "link"))

	aside, err := quarantinePath(made, filepath.Join(shm, "quarantine"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(made); err == nil {
		t.Errorf("%s is still in the workspace", made)
	}
	for name, want := range map[string]string{"pre-commit": "planted\n", "_/h": "inner\n", "link": "planted\n"} {
		if got, err := os.ReadFile(filepath.Join(aside, name)); err != nil || string(got) != want {
			t.Errorf("%s in quarantine: %q, %v", name, got, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(aside, "link")); err != nil || target != "pre-commit" {
		t.Errorf("the link: %q, %v", target, err)
	}
	if info, err := os.Stat(filepath.Join(aside, "pre-commit")); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("pre-commit's mode: %v, %v", info, err)
	}
}
