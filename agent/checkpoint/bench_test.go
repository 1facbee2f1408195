package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/checkpoint"
)

// bigRepo is a committed git repository of n files in 100 directories.
func bigRepo(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	for i := range n {
		p := filepath.Join(root, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d.go", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, fmt.Appendf(nil, "package d\n\n// file %d\nvar X%d = %d\n", i, i, i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	userGit(b, root, "init", "-q")
	userGit(b, root, "add", "-A")
	userGit(b, root, "-c", "user.email=u@example.com", "-c", "user.name=U", "-c", "gc.auto=0", "-c", "maintenance.auto=false", "commit", "-q", "-m", "start")
	return root
}

// stepped is a keeper that took the first snapshot (which reads every
// file) of a turn in a repository of n files.
func stepped(b *testing.B, n int) (string, *checkpoint.Keeper, agent.TurnRef) {
	root := bigRepo(b, n)
	k, st := newKeeper(b)
	ref := agent.TurnRef{SessionID: newSession(b, st, root), MessageID: agent.NewMessageID(), Workspace: root}
	if err := k.Step(context.Background(), ref); err != nil {
		b.Fatal(err)
	}
	return root, k, ref
}

// p50 reports the median of the durations as a metric, and of the
// processor times (darman's and git's) when given.
func p50(b *testing.B, ds []time.Duration, cpu ...time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	if len(cpu) > 0 {
		slices.Sort(cpu)
		b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "p50-cpu-ms")
	}
}

// BenchmarkSnapshotOneChangedFile is the cost of the snapshot before a
// step in a 10,000-file repository where one file changed since the last
// one (the goal: at most 30 ms at the median).
func BenchmarkSnapshotOneChangedFile(b *testing.B) {
	root, k, ref := stepped(b, 10_000)
	ctx := context.Background()
	var ds, cpu []time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		os.WriteFile(filepath.Join(root, "d07", "f00007.go"), fmt.Appendf(nil, "package d\n\nvar Y = %d\n", i), 0o644)
		b.StartTimer()
		began, cpu0 := time.Now(), cpuNow()
		if err := k.Step(ctx, ref); err != nil {
			b.Fatal(err)
		}
		ds, cpu = append(ds, time.Since(began)), append(cpu, cpuNow()-cpu0)
	}
	p50(b, ds, cpu...)
}

// BenchmarkGitStatusBaseline is git status --porcelain in the same
// repository with one changed file: what git itself takes to find that
// change (a stat of every file), the floor of any snapshot made with git,
// to read the snapshot's figure against on a busy machine.
func BenchmarkGitStatusBaseline(b *testing.B) {
	root := bigRepo(b, 10_000)
	var ds, cpu []time.Duration
	for i := 0; b.Loop(); i++ {
		os.WriteFile(filepath.Join(root, "d07", "f00007.go"), fmt.Appendf(nil, "package d\n\nvar Y = %d\n", i), 0o644)
		began, cpu0 := time.Now(), cpuNow()
		userGit(b, root, "-c", "gc.auto=0", "status", "--porcelain")
		ds, cpu = append(ds, time.Since(began)), append(cpu, cpuNow()-cpu0)
	}
	p50(b, ds, cpu...)
}

// BenchmarkSnapshotNothingChanged is the same with no change at all.
func BenchmarkSnapshotNothingChanged(b *testing.B) {
	_, k, ref := stepped(b, 10_000)
	ctx := context.Background()
	var ds, cpu []time.Duration
	for b.Loop() {
		began, cpu0 := time.Now(), cpuNow()
		if err := k.Step(ctx, ref); err != nil {
			b.Fatal(err)
		}
		ds, cpu = append(ds, time.Since(began)), append(cpu, cpuNow()-cpu0)
	}
	p50(b, ds, cpu...)
}

// BenchmarkRevertTwelveFiles is the revert of a turn that changed 12 files
// of a 1,000-file repository, on the disk (the goal: at most 100 ms, plus
// the editor's time when it goes through one); redo, between the
// iterations, is not counted.
func BenchmarkRevertTwelveFiles(b *testing.B) {
	root, k, ref := stepped(b, 1_000)
	ses := ref.SessionID
	ctx := context.Background()
	for i := range 12 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("d%02d", i), fmt.Sprintf("f%05d.go", i)), []byte("package d // changed by the turn\n"), 0o644)
	}
	if err := k.End(ctx, ref); err != nil {
		b.Fatal(err)
	}
	var ds []time.Duration
	for b.Loop() {
		began := time.Now()
		rep, err := k.Revert(ctx, checkpoint.RevertOptions{Session: ses})
		if err != nil || len(rep.Files) != 12 || len(rep.Conflicts) != 0 {
			b.Fatalf("revert: %v %+v", err, rep)
		}
		ds = append(ds, time.Since(began))
		b.StopTimer()
		if _, err := k.Redo(ctx, checkpoint.RevertOptions{Session: ses}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	p50(b, ds)
}
