package diagnostics

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// clangdPath finds clangd on PATH, or skips.
func clangdPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("clangd")
	if err != nil {
		t.Skip("clangd is not installed: run `make deps` (apt-get install clangd)")
	}
	return p
}

// TestClangd: an edit of a C file into an error and back, against clangd.
func TestClangd(t *testing.T) {
	clangdPath(t)
	root := t.TempDir()
	write(t, filepath.Join(root, "compile_flags.txt"), "-std=c11\n-Wall\n")
	good := "#include <stddef.h>\n\nint add(int a, int b) {\n    return a + b;\n}\n"
	file := write(t, filepath.Join(root, "add.c"), good)
	p, err := New(context.Background(), Options{Root: root, Wait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	editIntoErrorAndBack(t, p, file, good,
		"#include <stddef.h>\n\nint add(int a, int b) {\n    return a + c;\n}\n",
		"add.c: L4: Use of undeclared identifier 'c'")
	if st := statusOf(p, "c"); st.State != StateRunning || st.Root != root {
		t.Fatalf("clangd = %+v; want it running for the directory with compile_flags.txt", st)
	}
}
