//go:build unix

package lsp_test

import (
	"os"
	"syscall"
	"testing"
)

// inode is the file's inode number: a file replaced by a rename gets a new
// one.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}
