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
// written again. "revert" is the revert of a turn that changed twelve .go
// files, by the watcher's keeper (a redo between two reverts, untimed).
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
	b.Run("revert", func(b *testing.B) { benchTreeRevert(b, root, keeper(false), ref) })
}

// benchTreeRevert times k's revert of a turn of ref's session that changed
// the first twelve .go files of root, putting them back as they were after.
func benchTreeRevert(b *testing.B, root string, k *checkpoint.Keeper, ref agent.TurnRef) {
	defer k.Close()
	ctx := context.Background()
	ref.MessageID = agent.NewMessageID()
	if err := k.Step(ctx, ref); err != nil {
		b.Fatal(err)
	}
	files := goFiles(b, root, 12)
	for _, f := range files {
		orig, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		defer os.WriteFile(f, orig, 0o644)
		os.WriteFile(f, append(slices.Clip(orig), "\n// changed by the turn\n"...), 0o644)
	}
	if err := k.End(ctx, ref); err != nil {
		b.Fatal(err)
	}
	var ds []time.Duration
	for b.Loop() {
		began := time.Now()
		rep, err := k.Revert(ctx, checkpoint.RevertOptions{Session: ref.SessionID})
		if err != nil || len(rep.Files) != len(files) || len(rep.Conflicts) != 0 {
			b.Fatalf("revert: %v %+v", err, rep)
		}
		ds = append(ds, time.Since(began))
		b.StopTimer()
		if _, err := k.Redo(ctx, checkpoint.RevertOptions{Session: ref.SessionID}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(ds[len(ds)/2]), "p50-ms")
	b.ReportMetric(ms(ds[(len(ds)*99+99)/100-1]), "p99-ms")
}

func firstGoFile(b *testing.B, root string) string {
	found, _ := filepath.Rel(root, goFiles(b, root, 1)[0])
	return filepath.ToSlash(found)
}

// goFiles is the first n .go files of root outside .git and node_modules.
func goFiles(b *testing.B, root string, n int) []string {
	var found []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return filepath.SkipDir
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") && d.Type().IsRegular() {
			if found = append(found, p); len(found) == n {
				return filepath.SkipAll
			}
		}
		return nil
	})
	if len(found) < n {
		b.Fatalf("fewer than %d .go files in %s: set DARMAN_BENCH_FILE", n, root)
	}
	return found
}
