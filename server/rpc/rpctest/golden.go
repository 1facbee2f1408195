package rpctest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Golden compares a wire transcript with the golden file at path, or
// writes it there when update is set (the package's -update flag).
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("the wire transcript differs from %s (if the change is meant, rerun with -update and review the diff):\n%s",
			path, LineDiff(string(want), string(got)))
	}
}

// LineDiff lists the lines of want and got that differ, by line number.
func LineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d\n  want: %s\n   got: %s\n", i+1, w, g)
		}
	}
	return b.String()
}
