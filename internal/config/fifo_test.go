//go:build unix

package config_test

import (
	"path/filepath"
	"syscall"
	"testing"
)

// A named pipe would block the read until someone writes to it.
func TestNamedPipeIsRefused(t *testing.T) {
	f := newFixture(t)
	if err := syscall.Mkfifo(filepath.Join(f.root, "darman.json"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := f.load()
	want := "darman.json: cannot read the file: not a regular file"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v; want %s", err, want)
	}
}
