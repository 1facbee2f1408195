package diagnostics

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/config"
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

// TestTypeScriptLanguageServerRunsOneTSServer checks darman starts
// typescript-language-server with one tsserver and no typings installer
// (it answers every query from the semantic server, and the installer
// fetches @types packages from npm): a syntax-only tsserver and the
// installer were 250 MiB of the pool's 470 with three servers
// (docs/benchmarks.md). A configured initializationOptions still wins.
func TestTypeScriptLanguageServerRunsOneTSServer(t *testing.T) {
	env := nodeServerEnv(t, "typescript-language-server")
	for _, tc := range []struct {
		name     string
		servers  map[string]config.LSP
		tsserver int
	}{
		{name: "default", tsserver: 1},
		{name: "configured", tsserver: 2, servers: map[string]config.LSP{"typescript": {
			InitializationOptions: json.RawMessage(`{"tsserver":{"useSyntaxServer":"auto"}}`),
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, filepath.Join(root, "tsconfig.json"), `{"compilerOptions": {"strict": true, "noEmit": true}}`)
			file := write(t, filepath.Join(root, "a.ts"), "export const n: number = \"one\";\n")
			p, err := New(context.Background(), Options{Root: root, Env: env, Wait: 30 * time.Second, Servers: tc.servers})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if out, meta := p.Check(context.Background(), file); !strings.Contains(out, "a.ts: L1: Type 'string' is not assignable to type 'number'.") {
				t.Fatalf("Check = %q; metadata %s", out, meta)
			}
			var tsservers, installers []string
			for _, argv := range descendants(t, os.Getpid()) {
				switch {
				case strings.Contains(argv, "typingsInstaller.js"):
					installers = append(installers, argv)
				case strings.Contains(argv, "tsserver.js"):
					tsservers = append(tsservers, argv)
				}
			}
			if len(tsservers) != tc.tsserver || len(installers) != 0 {
				t.Fatalf("running tsservers:\n%s\ntypings installers:\n%s\nwant %d tsserver(s), no installer",
					strings.Join(tsservers, "\n"), strings.Join(installers, "\n"), tc.tsserver)
			}
		})
	}
}

// descendants returns the command lines of pid's descendant processes,
// read from /proc (the test skips where there is none).
func descendants(t *testing.T, pid int) []string {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to read the processes from: %v", err)
	}
	children := map[int][]int{}
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name in parentheses may hold spaces: the parent's
		// pid is the second field after its closing one.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []string
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = append(queue[1:], children[p]...)
		if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline")); err == nil {
			out = append(out, strings.Join(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), " "))
		}
	}
	return out
}
