package diagnostics

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/testenv"
)

const (
	greetGo = testenv.GreetGo
	useGo   = testenv.UseGo
)

// goModule writes a small two-package module and returns a pool for it
// whose go server is gopls, started with testenv.GoplsEnv.
func goModule(t testing.TB) (*Pool, string) {
	t.Helper()
	env, _ := testenv.GoplsEnv(t)
	root := testenv.GoModule(t, t.TempDir())
	p, err := New(context.Background(), Options{Root: root, Env: env, Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, root
}

func TestGoplsCheck(t *testing.T) {
	p, root := goModule(t)
	ctx := context.Background()
	a := filepath.Join(root, "a", "a.go")

	out, meta := p.Check(ctx, a)
	if out != "" {
		t.Fatalf("Check of the clean module = %q", out)
	}
	if !strings.Contains(string(meta), `"server":"go"`) {
		t.Fatalf("metadata = %s", meta)
	}

	// An edit into a type error, which also breaks the caller in b.
	write(t, a, strings.Replace(greetGo, `func Greet(name string) string {
	return "hello " + name`, `func Greet(name string, n int) string {
	return 1`, 1))
	out, meta = p.Check(ctx, a)
	want := "LSP errors detected in this file, please fix:\na/a.go: L5: cannot use 1 (untyped int constant) as string value in return statement\n"
	if !strings.HasPrefix(out, want) {
		t.Fatalf("Check after the edit =\n%s\nwant it to start with\n%s\nmetadata: %s", out, want, meta)
	}
	if !strings.Contains(out, "LSP errors detected in other files, please fix:\nb/b.go: L7: not enough arguments in call to a.Greet have (string) want (string, int)\n") {
		t.Fatalf("Check did not report the broken caller in b/b.go:\n%s", out)
	}

	// The fix: clean again, the caller included.
	write(t, a, greetGo)
	out, meta = p.Check(ctx, a)
	if out != "" {
		t.Fatalf("Check after the fix = %q (metadata %s)", out, meta)
	}
}
