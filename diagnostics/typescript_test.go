package diagnostics

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/diagnostics/lsp"
)

const greetTS = `/** Greet says hello. */
export function greet(name: string): string {
  return "hello " + name;
}

export class Greeter {
  constructor(private readonly prefix: string) {}

  /** Say greets with the prefix. */
  say(name: string): string {
    return this.prefix + greet(name);
  }
}
`

const useTS = `import { greet, Greeter } from "./greet";

export function use(): string {
  return greet("x") + new Greeter("> ").say("y");
}
`

// tsProject writes a small two-file TypeScript project and returns a pool
// for it whose typescript server is typescript-language-server, or, with
// native, TypeScript 7's own (its node_modules from .cache/ts7).
func tsProject(t *testing.T, native bool) (p *Pool, greet, use string) {
	t.Helper()
	root := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}
	if native {
		if err := os.Symlink(ts7Modules(t), filepath.Join(root, "node_modules")); err != nil {
			t.Fatal(err)
		}
	} else {
		env = nodeServerEnv(t, "typescript-language-server")
	}
	write(t, filepath.Join(root, "tsconfig.json"), `{"compilerOptions": {"strict": true, "noEmit": true}}`)
	greet = write(t, filepath.Join(root, "greet.ts"), greetTS)
	use = write(t, filepath.Join(root, "use.ts"), useTS)
	// A cold tsserver on a loaded machine takes seconds to load the
	// project; the queries wait for it (see Pool.ready).
	p, err := New(context.Background(), Options{Root: root, Env: env, Wait: time.Minute, QueryTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, greet, use
}

func TestTypeScriptQueries(t *testing.T) {
	p, greet, use := tsProject(t, false)
	tsQueries(t, p, greet, use, tsWant{
		refs:    []string{"greet.ts:11:26", "use.ts:1:10", "use.ts:4:10"},
		related: true,
	})
}

// TestTypeScript7Queries: the same queries against TypeScript 7's native
// server, which counts no import as a reference and (7.0.2) sends no
// related information for a missing argument.
func TestTypeScript7Queries(t *testing.T) {
	p, greet, use := tsProject(t, true)
	tsQueries(t, p, greet, use, tsWant{refs: []string{"greet.ts:11:26", "use.ts:4:10"}})
}

// tsWant is what differs between the TypeScript servers.
type tsWant struct {
	// refs are greet's references, as file:line:column.
	refs []string
	// related says the missing argument's error points at the parameter.
	related bool
}

// tsQueries runs every query of the pool on tsProject's files.
func tsQueries(t *testing.T, p *Pool, greet, use string, want tsWant) {
	t.Helper()
	ctx := context.Background()

	// Nothing is open yet: the workspace query opens a file itself, as
	// tsserver answers navto only for the projects of open files.
	syms, err := p.Symbols(ctx, "greet", SymbolQuery{Kinds: []string{"function"}})
	if err != nil || len(syms) == 0 {
		t.Fatalf("Symbols(greet) = %+v, %v", syms, err)
	}
	if s := syms[0]; s.Name != "greet" || s.Location.Path != greet || s.Location.Start.Line != 2 {
		t.Fatalf("Symbols(greet)[0] = %+v; want the function on greet.ts line 2", s)
	}

	// typescript-language-server names no container: the outline does.
	got, err := p.Resolve(ctx, "Greeter.say", "", "typescript")
	if err != nil || len(got) != 1 || got[0].Kind != "method" || got[0].Container != "Greeter" || got[0].Location.Path != greet || got[0].Location.Start != (Position{10, 3}) {
		t.Fatalf("Resolve(Greeter.say) = %+v, %v; want the method at greet.ts:10:3", got, err)
	}
	if _, err := p.Resolve(ctx, "Other.say", "", "typescript"); err == nil {
		t.Fatal("Resolve(Other.say) found something; say is Greeter's")
	}

	refs, err := p.References(ctx, greet, Position{2, 17}, false)
	var where []string
	for _, r := range refs {
		where = append(where, filepath.Base(r.Path)+":"+strconv.Itoa(r.Start.Line)+":"+strconv.Itoa(r.Start.Column))
	}
	slices.Sort(where)
	if err != nil || !slices.Equal(where, want.refs) {
		t.Fatalf("References(greet) = %v, %v; want %v", where, err, want.refs)
	}

	defs, err := p.Definition(ctx, use, Position{4, 10})
	if err != nil || len(defs) != 1 || defs[0].Path != greet || defs[0].Start != (Position{2, 17}) {
		t.Fatalf("Definition = %+v, %v; want greet.ts:2:17", defs, err)
	}
	hover, err := p.Hover(ctx, use, Position{4, 10})
	if err != nil || !strings.Contains(hover, "greet(name: string): string") || !strings.Contains(hover, "Greet says hello.") {
		t.Fatalf("Hover = %q, %v", hover, err)
	}

	edits, err := p.Rename(ctx, greet, Position{2, 17}, "hello")
	if err != nil || len(edits) != 2 || edits[0].Path != greet || edits[1].Path != use {
		t.Fatalf("Rename = %+v, %v; want edits to greet.ts and use.ts", edits, err)
	}
	if !strings.Contains(edits[0].NewText, "export function hello(name: string)") || !strings.Contains(edits[0].NewText, "this.prefix + hello(name)") {
		t.Fatalf("Rename's greet.ts:\n%s", edits[0].NewText)
	}
	if want := strings.NewReplacer("{ greet,", "{ hello,", "greet(", "hello(").Replace(useTS); edits[1].NewText != want {
		t.Fatalf("Rename's use.ts:\n%s\nwant\n%s", edits[1].NewText, want)
	}
	if disk, _ := os.ReadFile(use); string(disk) != useTS {
		t.Fatal("Rename wrote to disk")
	}

	messy := write(t, filepath.Join(filepath.Dir(greet), "messy.ts"), "export  const   x={a:1,b:[1,2]}\nexport function f( a:number ){\nreturn a}\n")
	formatted, err := p.Format(ctx, messy)
	if want := "export const x = { a: 1, b: [1, 2] }\nexport function f(a: number) {\n\treturn a\n}\n"; err != nil || formatted != want {
		t.Fatalf("Format = %q, %v; want %q", formatted, err, want)
	}
	if disk, _ := os.ReadFile(messy); !strings.HasPrefix(string(disk), "export  const") {
		t.Fatal("Format wrote to disk")
	}

	outline, err := p.DocumentSymbols(ctx, greet)
	if err != nil || len(outline) != 2 || outline[0].Name != "greet" || outline[1].Name != "Greeter" || outline[1].Kind != "class" {
		t.Fatalf("DocumentSymbols = %+v, %v", outline, err)
	}
	if !slices.ContainsFunc(outline[1].Children, func(s Symbol) bool { return s.Name == "say" && s.Kind == "method" }) {
		t.Fatalf("Greeter's outline lacks the method say: %+v", outline[1].Children)
	}

	// An unsaved call with a missing argument: TypeScript's error points
	// at the parameter in the other file as related information.
	rep, err := p.DiagnoseText(ctx, use, useTS+"export const none = greet();\n", time.Minute)
	if err != nil || len(rep.Errors()) != 1 {
		t.Fatalf("DiagnoseText = %+v, %v; want one error", rep, err)
	}
	e := rep.Errors()[0]
	if e.Line != 6 || e.Code != "2554" || !strings.Contains(e.Message, "Expected 1 arguments, but got 0.") {
		t.Fatalf("the overlay's error = %+v", e)
	}
	if want.related && (len(e.Related) != 1 || e.Related[0].Location.Path != greet || e.Related[0].Location.Start != (Position{2, 23}) || !strings.Contains(e.Related[0].Message, "An argument for 'name' was not provided.")) {
		t.Fatalf("the error's related information = %+v; want the parameter name at greet.ts:2:23", e.Related)
	}
	if disk, _ := os.ReadFile(use); string(disk) != useTS {
		t.Fatal("DiagnoseText wrote to disk")
	}
}

// ts7Modules is a node_modules holding TypeScript 7 (native, `tsc --lsp`),
// installed by `make deps` into .cache/ts7; the test skips without it.
func ts7Modules(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".cache", "ts7", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if !isExecutable(filepath.Join(dir, ".bin", "tsc")) || !hasTypeScript7(filepath.Dir(dir)) {
		t.Skip("TypeScript 7 is not installed: run `make deps` (npm install --prefix .cache/ts7 typescript@7)")
	}
	return dir
}

// TestTypeScript7Native: a project whose node_modules has TypeScript 7
// gets its native language server (tsc --lsp --stdio), not
// typescript-language-server, and an edit into a type error and back is
// reported as with the other servers.
func TestTypeScript7Native(t *testing.T) {
	modules := ts7Modules(t)
	root := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(root, "node_modules")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "tsconfig.json"), `{"compilerOptions": {"strict": true, "noEmit": true}}`)
	write(t, filepath.Join(root, "greet.ts"), greetTS)
	file := write(t, filepath.Join(root, "use.ts"), useTS)
	// PATH without typescript-language-server: the choice must not
	// depend on what else is installed.
	p, err := New(context.Background(), Options{Root: root, Wait: time.Minute, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	editIntoErrorAndBack(t, p, file, useTS,
		strings.Replace(useTS, "export function use(): string {", "export function use(): number {", 1),
		"use.ts: L4: Type 'string' is not assignable to type 'number'.")
	st := statusOf(p, "typescript")
	if want := []string{filepath.Join(root, "node_modules", ".bin", "tsc"), "--lsp", "--stdio"}; !slices.Equal(st.Command, want) || st.State != StateRunning {
		t.Fatalf("typescript server = %+v; want %v running", st, want)
	}
}

// TestTypeScriptServerChoice: the selection without a real TypeScript 7.
// A project-local tsc (here a script that runs fakels) is used with
// --lsp --stdio only when node_modules/typescript is version 7 or later.
func TestTypeScriptServerChoice(t *testing.T) {
	for _, tt := range []struct {
		version string
		native  bool
	}{{"7.0.2", true}, {"7.1.0-dev.20260707", true}, {"6.0.3", false}, {"", false}} {
		t.Run("typescript "+tt.version, func(t *testing.T) {
			root := t.TempDir()
			argsLog := filepath.Join(root, "args.log")
			tsc := write(t, filepath.Join(root, "node_modules", ".bin", "tsc"), "#!/bin/sh\necho \"$@\" > "+argsLog+"\nexec "+fakeLS+"\n")
			os.Chmod(tsc, 0o755)
			if tt.version != "" {
				write(t, filepath.Join(root, "node_modules", "typescript", "package.json"), `{"name": "typescript", "version": "`+tt.version+`"}`)
			}
			file := write(t, filepath.Join(root, "a.ts"), "let x = 1; // ERROR\n")
			p, err := New(context.Background(), Options{Root: root, Env: []string{"PATH=" + filepath.Join(root, "empty")}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			rep, err := p.Diagnostics(context.Background(), file, 10*time.Second)
			if !tt.native {
				if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "typescript-language-server was not found") {
					t.Fatalf("Diagnostics = %v; want typescript-language-server asked for", err)
				}
				return
			}
			if err != nil || len(rep.Errors()) != 1 {
				t.Fatalf("Diagnostics = %+v, %v; want the fake's error", rep, err)
			}
			if args, _ := os.ReadFile(argsLog); string(args) != "--lsp --stdio\n" {
				t.Fatalf("tsc ran with %q; want --lsp --stdio", args)
			}
		})
	}
}

// TestTypeScriptLanguageServerCheck: typescript-language-server's
// diagnostics are asked of its tsserver (Pulled), for the edited file and
// for the other open files, so an edit that breaks a caller in another
// open file reports it, and the fix clears both.
func TestTypeScriptLanguageServerCheck(t *testing.T) {
	p, greet, use := tsProject(t, false)
	ctx := context.Background()
	for _, file := range []string{use, greet} {
		if out, meta := p.Check(ctx, file); out != "" {
			t.Fatalf("Check of the clean %s = %q; metadata %s", filepath.Base(file), out, meta)
		}
	}

	write(t, greet, strings.NewReplacer("function greet(name: string): string", "function hello(name: string): number",
		"greet(name)", "String(hello(name))").Replace(greetTS))
	out, meta := p.Check(ctx, greet)
	want := "LSP errors detected in this file, please fix:\ngreet.ts: L3: Type 'string' is not assignable to type 'number'.\n\n" +
		"LSP errors detected in other files, please fix:\nuse.ts: L1: "
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "'greet'") {
		t.Fatalf("Check after the edit =\n%s\nwant it to start with\n%s… 'greet' …; metadata %s", out, want, meta)
	}
	var res CheckResult
	if err := json.Unmarshal(meta, &res); err != nil || len(res.Files) != 1 || !res.Files[0].Pulled || res.Files[0].Stale {
		t.Fatalf("metadata = %s (%v); want the edited file's set pulled, not stale", meta, err)
	}

	write(t, greet, greetTS)
	if out, meta := p.Check(ctx, greet); out != "" {
		t.Fatalf("Check after the fix = %q; metadata %s", out, meta)
	}
}

// TestTypeScriptLanguageServerPullMatchesPublish: the set darman asks of
// tsserver is the one typescript-language-server publishes for the same
// content (its own pass, 300 ms or more after the change): every kind (a
// syntax error, a type error pointing at another file, an unused
// variable's hint), in the same order, with the same positions, codes,
// severities, sources and related places.
func TestTypeScriptLanguageServerPullMatchesPublish(t *testing.T) {
	p, _, use := tsProject(t, false)
	ctx := context.Background()
	if _, err := p.Diagnostics(ctx, use, time.Minute); err != nil {
		t.Fatal(err)
	}
	_, c, err := p.client(ctx, use)
	if err != nil {
		t.Fatal(err)
	}
	write(t, use, useTS+"export function more() {\n  const unused = 1;\n  return greet() +;\n}\n")
	if err := p.Touch(ctx, use); err != nil {
		t.Fatal(err)
	}
	uri := lsp.URIFromPath(use)
	kinds := []string{`"code":"1109"`, `"code":"2554"`, `"code":"6133"`, `"relatedInformation"`}
	complete := func(set []byte) bool {
		for _, k := range kinds {
			if !strings.Contains(string(set), k) {
				return false
			}
		}
		return true
	}

	// typescript-language-server's own sets carry no version, and each
	// replaces the last until darman pulls one for the version (which a
	// later unversioned set does not replace): wait for its set with
	// every kind first, then pull.
	deadline := time.Now().Add(time.Minute)
	var published []byte
	for {
		ch := c.Changed()
		for _, pub := range c.Published() {
			if pub.URI == uri && pub.Version == nil {
				published, _ = json.Marshal(pub.Items)
			}
		}
		if complete(published) {
			break
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			t.Fatalf("typescript-language-server never published a set with %v; the last: %s", kinds, published)
		}
	}
	set, err := c.Diagnostics(ctx, uri, lsp.WaitOptions{Wait: time.Minute})
	if err != nil || !set.Pulled || !set.Fresh {
		t.Fatalf("Diagnostics = %+v, %v; want a fresh pulled set", set, err)
	}
	pulled, _ := json.Marshal(set.Items)
	if string(pulled) != string(published) {
		t.Fatalf("the pulled set differs from the published one\npulled:    %s\npublished: %s", pulled, published)
	}
}
