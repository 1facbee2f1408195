//go:build linux

package main_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/internal/sandbox"
)

// BenchmarkSandboxStart measures what the sandbox adds to starting a
// command, from before Wrap to the command's exit: building the policy,
// confining a thread of this process and starting bash -c true from it
// (landlock), against plain bash -c true, both started as internal/child
// starts darman's commands (a group of their own, the parent-death
// signal, the output on a pipe). It reports the medians and the median
// overhead (goal: at most 3 ms). with-protected adds the mount namespace
// the protected paths need: the thread makes it where darman may mount
// (root); elsewhere the workspace's namespace holder ("darman sandbox-exec
// --hold", the real binary, started once, on the first run) starts the
// command.
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
	sb := sandbox.New(sandbox.Options{Helper: helper, Protected: permission.ProtectedPaths}) // as darman runs it
	defer sb.Close()
	if st := sb.Status(); !st.Active() {
		b.Skipf("no sandbox: %s", st.Reason)
	}
	run := func(wrap bool, root string) time.Duration {
		cmd := exec.Command(bash, "-c", "true")
		cmd.Dir = root
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		start := time.Now()
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		cmd.Stdout, cmd.Stderr = w, w
		if wrap {
			if err := sb.Wrap(cmd, sandbox.Request{Root: root, Session: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
		err = sandbox.Start(cmd)
		w.Close()
		var out []byte
		if err == nil {
			out, _ = io.ReadAll(r)
			err = cmd.Wait()
		}
		if err != nil {
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
