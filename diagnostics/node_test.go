package diagnostics

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeServerEnv returns an environment whose PATH finds the npm-installed
// language server bin (from `make deps`, in the repository's .cache/npm),
// or skips the test.
func nodeServerEnv(t testing.TB, bin string) []string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".cache", "npm", "node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	path := dir + string(os.PathListSeparator) + os.Getenv("PATH")
	found := false
	for _, d := range filepath.SplitList(path) {
		if isExecutable(filepath.Join(d, bin)) {
			found = true
			break
		}
	}
	if !found {
		t.Skipf("%s is not installed: run `make deps` (npm install --prefix .cache/npm pyright typescript-language-server typescript@6)", bin)
	}
	return append(os.Environ(), "PATH="+path)
}

// editIntoErrorAndBack checks a file clean, writes an error into it,
// expects the error's line in Check's output, then fixes it and expects a
// clean output again.
func editIntoErrorAndBack(t *testing.T, p *Pool, file, good, bad, wantLine string) {
	t.Helper()
	ctx := context.Background()
	// The first check starts the server and loads the project.
	if out, meta := p.Check(ctx, file); out != "" {
		t.Fatalf("Check of the clean file = %q; metadata %s", out, meta)
	}
	write(t, file, bad)
	out, meta := p.Check(ctx, file)
	if !strings.HasPrefix(out, "LSP errors detected in this file, please fix:\n") || !strings.Contains(out, wantLine) {
		t.Fatalf("Check after the edit =\n%s\nwant a line containing %q; metadata %s", out, wantLine, meta)
	}
	write(t, file, good)
	out, meta = p.Check(ctx, file)
	if out != "" {
		t.Fatalf("Check after the fix = %q; metadata %s", out, meta)
	}
}

func TestPyright(t *testing.T) {
	env := nodeServerEnv(t, "pyright-langserver")
	root := t.TempDir()
	write(t, filepath.Join(root, "pyproject.toml"), "[project]\nname = \"m\"\n")
	file := write(t, filepath.Join(root, "main.py"), "def f(x: int) -> int:\n    return x\n")
	p, err := New(context.Background(), Options{Root: root, Env: env, Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	editIntoErrorAndBack(t, p, file,
		"def f(x: int) -> int:\n    return x\n",
		"def f(x: int) -> str:\n    return x\n",
		"main.py: L2: Type \"int\" is not assignable to return type \"str\"")

	// Pyright links each rule's documentation (codeDescription).
	rep, err := p.DiagnoseText(context.Background(), file, "def f(x: int) -> str:\n    return x\n", 30*time.Second)
	if err != nil || len(rep.Errors()) != 1 {
		t.Fatalf("DiagnoseText = %+v, %v", rep, err)
	}
	if e := rep.Errors()[0]; e.Code != "reportReturnType" || !strings.HasPrefix(e.CodeHref, "https://") || !strings.Contains(e.CodeHref, "reportReturnType") {
		t.Fatalf("pyright's error = %+v; want its code and the link to the rule's documentation", e)
	}
}

func TestTypeScriptLanguageServer(t *testing.T) {
	env := nodeServerEnv(t, "typescript-language-server")
	root := t.TempDir()
	write(t, filepath.Join(root, "tsconfig.json"), `{"compilerOptions": {"strict": true, "noEmit": true}}`)
	file := write(t, filepath.Join(root, "a.ts"), "export const n: number = 1;\n")
	p, err := New(context.Background(), Options{Root: root, Env: env, Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	editIntoErrorAndBack(t, p, file,
		"export const n: number = 1;\n",
		"export const n: number = 1;\nexport const s: number = \"one\";\n",
		"a.ts: L2: Type 'string' is not assignable to type 'number'.")
}
