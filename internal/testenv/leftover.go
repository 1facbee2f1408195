package testenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TempDir is t.TempDir for a directory that programs the test starts
// write in (a home, a data directory); it is removed when the test and
// the cleanups registered after TempDir have ended. When the removal
// fails because something still wrote in it, the test fails saying what
// was left there and which processes still use it, so the late writer is
// named rather than guessed.
func TempDir(t testing.TB) string {
	t.Helper()
	pattern := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' {
			return '_'
		}
		return r
	}, t.Name()) + "-"
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove the test's directory: %v; left in it:\n%s", err, strings.Join(Leftovers(dir), "\n"))
		}
	})
	return dir
}

// Leftovers lists what is in dir, a line per entry (its path in dir, its
// mode, size and modification time), and the processes whose working
// directory or open files are in it (Linux).
func Leftovers(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir || len(out) >= 100 {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if info, err := d.Info(); err == nil {
			out = append(out, fmt.Sprintf("  %s %v %d bytes, modified %s", rel, info.Mode(), info.Size(), info.ModTime().Format(time.RFC3339Nano)))
		}
		return nil
	})
	procs, _ := os.ReadDir("/proc")
	for _, pe := range procs {
		pid := pe.Name()
		if pid == "" || pid[0] < '0' || pid[0] > '9' {
			continue
		}
		var uses []string
		if cwd, err := os.Readlink("/proc/" + pid + "/cwd"); err == nil && within(dir, cwd) {
			uses = append(uses, "cwd "+cwd)
		}
		fds, _ := os.ReadDir("/proc/" + pid + "/fd")
		for _, fd := range fds {
			if target, err := os.Readlink("/proc/" + pid + "/fd/" + fd.Name()); err == nil && within(dir, target) {
				uses = append(uses, "fd "+target)
			}
		}
		if len(uses) > 0 {
			cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			out = append(out, fmt.Sprintf("  process %s (%s): %s", pid, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "), strings.Join(uses, ", ")))
		}
	}
	return out
}

func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
