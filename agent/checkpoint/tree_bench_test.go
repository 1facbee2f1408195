package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/store"
)

// BenchmarkTreeSnapshot is the snapshot before a step, one file changed
// since the last, in the tree DARMAN_BENCH_TREE names (a git repository
// scripts/bench-checkpoint.sh generates: 1,000 to 300,000 files, or a copy
// of the Go distribution's src); DARMAN_BENCH_FILE is the file changed
// (relative), by default the first .go file found. "walk" is every
// snapshot a walk of the whole tree (the watcher off), "watch" the
// watcher's; both run on one shadow repository, so the first snapshot,
// which reads every file, is paid once, outside the timings. It reports
// the median and the 99th percentile, the shadow's disk use and the
// directories watched. "watch-create" makes a new file each time instead:
// a change of the tree's names, after which the whole stat cache is
// written again.
func BenchmarkTreeSnapshot(b *testing.B) {
	root := os.Getenv("DARMAN_BENCH_TREE")
	if root == "" {
		b.Skip("DARMAN_BENCH_TREE is not set: run scripts/bench-checkpoint.sh")
	}
	rel := os.Getenv("DARMAN_BENCH_FILE")
	if rel == "" {
		rel = firstGoFile(b, root)
	}
	ctx := context.Background()
	data := b.TempDir()
	st, err := store.Open(ctx, filepath.Join(data, "store"), store.Options{GCInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s := agent.Session{ID: agent.NewSessionID(), Workspace: root, Created: time.Now(), Updated: time.Now()}
	if err := st.PutSession(ctx, s); err != nil {
		b.Fatal(err)
	}
	keeper := func(noWatch bool) *checkpoint.Keeper {
		k, err := checkpoint.New(checkpoint.Options{Dir: filepath.Join(data, "checkpoints"), Store: st, NoWatch: noWatch})
		if err != nil {
			b.Fatal(err)
		}
		return k
	}
	ref := agent.TurnRef{SessionID: s.ID, MessageID: agent.NewMessageID(), Workspace: root}
	path := filepath.Join(root, filepath.FromSlash(rel))
	orig, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	defer os.WriteFile(path, orig, 0o644)
	began := time.Now()
	first := keeper(true)
	if err := first.Step(ctx, ref); err != nil {
		b.Fatal(err)
	}
	first.Close()
	b.Logf("the first snapshot of %s: %v", root, time.Since(began))
	created := filepath.Join(filepath.Dir(path), "darman-bench-new")
	defer os.RemoveAll(created)
	for _, mode := range []string{"walk", "watch", "watch-create"} {
		b.Run(mode, func(b *testing.B) {
			k := keeper(mode == "walk")
			defer k.Close()
			began := time.Now()
			if err := k.Step(ctx, ref); err != nil { // the cache read, the watches set up
				b.Fatal(err)
			}
			setup := time.Since(began)
			var ds []time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				if mode == "watch-create" { // a new file: the whole stat cache is written
					os.MkdirAll(created, 0o755)
					os.WriteFile(filepath.Join(created, fmt.Sprintf("n%d.go", i)), []byte("package p\n"), 0o644)
				} else {
					os.WriteFile(path, fmt.Appendf(slices.Clip(orig), "\n// changed %d\n", i), 0o644)
				}
				b.StartTimer()
				began := time.Now()
				if err := k.Step(ctx, ref); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(began))
			}
			status, err := k.Status(ctx, root)
			if err != nil {
				b.Fatal(err)
			}
			if mode != "walk" && status.Watcher == "" {
				b.Fatalf("no watcher: %s", status.WatchError)
			}
			slices.Sort(ds)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(ds[len(ds)/2]), "p50-ms")
			b.ReportMetric(ms(ds[(len(ds)*99+99)/100-1]), "p99-ms")
			b.ReportMetric(ms(setup), "setup-ms")
			b.ReportMetric(float64(status.Bytes)/(1<<20), "shadow-MiB")
			b.ReportMetric(float64(status.Watched), "watched-dirs")
		})
	}
}

func firstGoFile(b *testing.B, root string) string {
	var found string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || found != "" {
			return filepath.SkipDir
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			found, _ = filepath.Rel(root, p)
			return filepath.SkipAll
		}
		return nil
	})
	if found == "" {
		b.Fatalf("no .go file in %s: set DARMAN_BENCH_FILE", root)
	}
	return filepath.ToSlash(found)
}
