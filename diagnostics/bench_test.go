package diagnostics

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/config"
)

// checkLoop edits file into and out of an error b.N times, running Check
// after each write as the edit tools do, and reports the pool's overhead:
// Check's time minus the server's own time from receiving the change to
// publishing (ServerTime).
func checkLoop(b *testing.B, p *Pool, file string, good, bad string) {
	ctx := context.Background()
	var server time.Duration
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		text := good
		if i%2 == 0 {
			text = bad
		}
		write(b, file, text)
		out, meta := p.Check(ctx, file)
		if (i%2 == 0) == (out == "") {
			b.Fatalf("iteration %d: output %q", i, out)
		}
		var res CheckResult
		if err := json.Unmarshal(meta, &res); err != nil || len(res.Files) != 1 || res.Files[0].Stale {
			b.Fatalf("iteration %d: metadata %s", i, meta)
		}
		server += res.Files[0].ServerTime
	}
	total := time.Since(start)
	b.ReportMetric(float64(server.Nanoseconds())/float64(b.N), "server-ns/op")
	b.ReportMetric(float64((total-server).Nanoseconds())/float64(b.N), "overhead-ns/op")
}

// BenchmarkCheckOverheadFake measures the pool against fakels, which
// publishes as soon as it reads a change.
func BenchmarkCheckOverheadFake(b *testing.B) {
	root := b.TempDir()
	pool, err := New(context.Background(), Options{Root: root, Wait: 10 * time.Second, Servers: map[string]config.LSP{
		"fake": {Command: []string{fakeLS}, Extensions: []string{".txt"}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	file := filepath.Join(root, "a.txt")
	write(b, file, "fine\n")
	if _, err := pool.Diagnostics(context.Background(), file, 10*time.Second); err != nil {
		b.Fatal(err)
	}
	checkLoop(b, pool, file, "fine\n", "ERROR\n")
}

// BenchmarkGoplsWarm is touch → diagnostics on a running gopls.
func BenchmarkGoplsWarm(b *testing.B) {
	p, root := goModule(b)
	a := filepath.Join(root, "a", "a.go")
	if _, err := p.Diagnostics(context.Background(), a, 30*time.Second); err != nil {
		b.Fatal(err)
	}
	checkLoop(b, p, a, greetGo, strings.Replace(greetGo, `"hello " + name`, `1`, 1))
}

// BenchmarkGoplsCold is a new gopls from start to the first diagnostics
// of a file in a small module.
func BenchmarkGoplsCold(b *testing.B) {
	_, root := goModule(b)
	a := filepath.Join(root, "a", "a.go")
	env := append(os.Environ(), "PATH="+filepath.Dir(goplsPath(b))+string(os.PathListSeparator)+os.Getenv("PATH"))
	for b.Loop() {
		p, err := New(context.Background(), Options{Root: root, Wait: 30 * time.Second, Env: env})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := p.Diagnostics(context.Background(), a, 30*time.Second)
		if err != nil || rep.Stale {
			b.Fatalf("Diagnostics = %+v, %v", rep, err)
		}
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
}

// BenchmarkTouchDiagnosticsFake is Touch then Diagnostics alone, without
// Check's quiet window for other files' sets.
func BenchmarkTouchDiagnosticsFake(b *testing.B) {
	root := b.TempDir()
	p, err := New(context.Background(), Options{Root: root, Wait: 10 * time.Second, Servers: map[string]config.LSP{
		"fake": {Command: []string{fakeLS}, Extensions: []string{".txt"}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	file := write(b, filepath.Join(root, "a.txt"), "fine\n")
	var server time.Duration
	start := time.Now()
	for i := range b.N {
		write(b, file, []string{"ERROR\n", "fine\n"}[i%2])
		if err := p.Touch(ctx, file); err != nil {
			b.Fatal(err)
		}
		rep, err := p.Diagnostics(ctx, file, 10*time.Second)
		if err != nil || rep.Stale || len(rep.Items) != 1-i%2 {
			b.Fatalf("Diagnostics = %+v, %v", rep, err)
		}
		server += rep.ServerTime
	}
	total := time.Since(start)
	b.ReportMetric(float64(server.Nanoseconds())/float64(b.N), "server-ns/op")
	b.ReportMetric(float64((total-server).Nanoseconds())/float64(b.N), "overhead-ns/op")
}
