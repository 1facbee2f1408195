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
	"github.com/darman-dev/darman/internal/testenv"
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
	env, _ := testenv.GoplsEnv(b)
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

// warmLoop runs checkLoop on a server already warm: the project is
// loaded and the file diagnosed once.
func warmLoop(b *testing.B, p *Pool, file, good, bad string) {
	b.Helper()
	write(b, file, good)
	if rep, err := p.Diagnostics(context.Background(), file, time.Minute); err != nil || rep.Stale {
		b.Fatalf("first Diagnostics = %+v, %v", rep, err)
	}
	checkLoop(b, p, file, good, bad)
}

// BenchmarkTypeScriptWarm is touch → diagnostics on a running
// typescript-language-server (TypeScript 6's tsserver), whose published
// sets carry no version: darman asks tsserver for the three kinds of
// diagnostics through the server's typescript.tsserverRequest command.
func BenchmarkTypeScriptWarm(b *testing.B) {
	env := nodeServerEnv(b, "typescript-language-server")
	root := b.TempDir()
	write(b, filepath.Join(root, "tsconfig.json"), `{"compilerOptions": {"strict": true, "noEmit": true}}`)
	write(b, filepath.Join(root, "greet.ts"), greetTS)
	p, err := New(context.Background(), Options{Root: root, Env: env})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	warmLoop(b, p, filepath.Join(root, "use.ts"), useTS, strings.Replace(useTS, "(): string", "(): number", 1))
}

// BenchmarkTypeScript7Warm is the same on TypeScript 7's native server.
func BenchmarkTypeScript7Warm(b *testing.B) {
	modules := ts7Modules(b)
	root := b.TempDir()
	if err := os.Symlink(modules, filepath.Join(root, "node_modules")); err != nil {
		b.Fatal(err)
	}
	write(b, filepath.Join(root, "tsconfig.json"), `{"compilerOptions": {"strict": true, "noEmit": true}}`)
	write(b, filepath.Join(root, "greet.ts"), greetTS)
	p, err := New(context.Background(), Options{Root: root})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	warmLoop(b, p, filepath.Join(root, "use.ts"), useTS, strings.Replace(useTS, "(): string", "(): number", 1))
}

// BenchmarkPyrightWarm is touch → diagnostics on a running pyright.
func BenchmarkPyrightWarm(b *testing.B) {
	env := nodeServerEnv(b, "pyright-langserver")
	root := b.TempDir()
	write(b, filepath.Join(root, "pyproject.toml"), "[project]\nname = \"m\"\n")
	p, err := New(context.Background(), Options{Root: root, Env: env})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	warmLoop(b, p, filepath.Join(root, "main.py"), "def f(x: int) -> int:\n    return x\n", "def f(x: int) -> str:\n    return x\n")
}

// BenchmarkClangdWarm is touch → diagnostics on a running clangd.
func BenchmarkClangdWarm(b *testing.B) {
	clangdPath(b)
	root := b.TempDir()
	write(b, filepath.Join(root, "compile_flags.txt"), "-std=c11\n")
	p, err := New(context.Background(), Options{Root: root})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	good := "int add(int a, int b) {\n    return a + b;\n}\n"
	warmLoop(b, p, filepath.Join(root, "add.c"), good, strings.Replace(good, "a + b", "a + c", 1))
}
