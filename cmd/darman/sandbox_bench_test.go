//go:build linux

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/sandbox"
)

// BenchmarkSandboxStart measures what the sandbox adds to starting a
// command: "darman sandbox-exec" (the real binary) building and applying
// the policy, then bash -c true, against plain bash -c true. It reports
// the medians and the median overhead (goal: at most 3 ms). with-protected
// adds the user and mount namespace the protected paths need.
func BenchmarkSandboxStart(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	ws := b.TempDir()
	os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644)
	plainWS := b.TempDir()
	helper := darmanBin
	if h := os.Getenv("DARMAN_BENCH_HELPER"); h != "" {
		helper = h // to compare with another helper binary
	}
	sb := sandbox.New(sandbox.Options{Helper: helper})
	defer sb.Close()
	if st := sb.Status(); !st.Active() {
		b.Skipf("no sandbox: %s", st.Reason)
	}
	run := func(wrap bool, root string) time.Duration {
		cmd := exec.Command(bash, "-c", "true")
		cmd.Dir = root
		start := time.Now()
		if wrap {
			if err := sb.Wrap(cmd, sandbox.Request{Root: root, Session: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		return time.Since(start)
	}
	for _, c := range []struct {
		name string
		root string
	}{{"landlock", plainWS}, {"with-protected", ws}} {
		b.Run(c.name, func(b *testing.B) {
			var plain, boxed []time.Duration
			for b.Loop() {
				plain = append(plain, run(false, c.root))
				boxed = append(boxed, run(true, c.root))
			}
			mp, mb := median(plain), median(boxed)
			b.ReportMetric(float64(mp.Microseconds())/1000, "plain-median-ms")
			b.ReportMetric(float64(mb.Microseconds())/1000, "sandboxed-median-ms")
			b.ReportMetric(float64((mb-mp).Microseconds())/1000, "overhead-median-ms")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
