package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/internal/testenv"
)

// rankModule writes a module whose names test the ranking: ParseInvocation
// declared once in the project and once in a dependency (a module outside
// the root, required through a replace), names that only start with it or
// contain it, and Build declared in code and in a test of a package that
// sorts before it.
func rankModule(t *testing.T) (root, dep string) {
	root, dep = testenv.Dir(t), testenv.Dir(t)
	writeFile(t, filepath.Join(dep, "go.mod"), "module example.com/dep\n\ngo 1.22\n")
	writeFile(t, filepath.Join(dep, "dep.go"), "package dep\n\n// ParseInvocation is the dependency's own.\nfunc ParseInvocation(s string) int { return len(s) }\n\n// Service serves.\ntype Service struct{}\n")
	writeFile(t, filepath.Join(root, "go.mod"), fmt.Sprintf("module example.com/m\n\ngo 1.22\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => %s\n", dep))
	writeFile(t, filepath.Join(root, "a", "a.go"), `package a

import "example.com/dep"

// ParseInvocation splits a command line.
func ParseInvocation(text string) (name, args string, ok bool) {
	return text, "", dep.ParseInvocation(text) > 0
}

// ParseInvocationArgs splits the arguments.
func ParseInvocationArgs(args string) []string { return nil }

// MustParseInvocation panics when text is not one.
func MustParseInvocation(text string) string { return text }
`)
	writeFile(t, filepath.Join(root, "c", "c_test.go"), "package c\n\nimport \"testing\"\n\nfunc Build(t *testing.T) {}\n")
	writeFile(t, filepath.Join(root, "d", "d.go"), "package d\n\n// Build builds.\nfunc Build() error { return nil }\n")
	return root, dep
}

// lookup calls lookup_symbol and returns its structured output, its text
// and the size of the whole result as it crosses the wire.
func lookup(t *testing.T, cs *mcp.ClientSession, args map[string]any) (LookupSymbolOutput, string, int) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup_symbol", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("lookup_symbol %v = %v, %v", args, toolText(res), err)
	}
	data, _ := json.Marshal(res)
	var out LookupSymbolOutput
	sc, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(sc, &out); err != nil {
		t.Fatalf("lookup_symbol %v: structured content %s: %v", args, sc, err)
	}
	return out, toolText(res), len(data)
}

func paths(syms []SymbolInfo) []string {
	var out []string
	for _, s := range syms {
		out = append(out, fmt.Sprintf("%s %s", s.Path, s.Name))
	}
	return out
}

func TestLookupRanksLikeAnExpert(t *testing.T) {
	root, dep := rankModule(t)
	_, cs := connect(t, root)

	// An exact, unique name: that declaration alone, in a small answer
	// that says what it left out and how to get it.
	out, text, size := lookup(t, cs, map[string]any{"query": "ParseInvocation"})
	if len(out.Symbols) != 1 || out.Symbols[0].Path != "a/a.go" || out.Symbols[0].Line != 6 || out.Symbols[0].Dependency {
		t.Fatalf("ParseInvocation = %v\n%s", paths(out.Symbols), text)
	}
	if sig := out.Symbols[0].Signature; sig != "func ParseInvocation(text string) (name, args string, ok bool)" {
		t.Errorf("signature = %q", sig)
	}
	if !strings.HasPrefix(text, "a/a.go:6:6 func ParseInvocation(text string) (name, args string, ok bool)\n") ||
		out.Note != "not listed: 2 partial or fuzzy matches (fuzzy: true)" {
		t.Errorf("ParseInvocation text =\n%s\nnote %q", text, out.Note)
	}
	if size > 1000 {
		t.Errorf("the exact-name answer is %d bytes on the wire, over 1 KB:\n%s", size, text)
	}

	// Dependencies when asked: the exact ones, the project's first.
	out, text, _ = lookup(t, cs, map[string]any{"query": "ParseInvocation", "scope": "all"})
	if got := paths(out.Symbols); len(got) != 2 || got[0] != "a/a.go ParseInvocation" || !out.Symbols[1].Dependency || out.Symbols[1].Path != filepath.Join(dep, "dep.go") {
		t.Fatalf("ParseInvocation in all = %v\n%s", got, text)
	}
	if !strings.Contains(text, "(dependency: example.com/dep)") {
		t.Errorf("a dependency's line does not say so:\n%s", text)
	}
	out, text, _ = lookup(t, cs, map[string]any{"query": "ParseInvocation", "scope": "dependencies"})
	if len(out.Symbols) != 1 || !out.Symbols[0].Dependency {
		t.Fatalf("ParseInvocation in dependencies = %v\n%s", paths(out.Symbols), text)
	}
	// ... or when the name is qualified by the dependency's package.
	out, text, _ = lookup(t, cs, map[string]any{"query": "dep.Service"})
	if len(out.Symbols) != 1 || !strings.HasSuffix(out.Symbols[0].Name, "Service") || !out.Symbols[0].Dependency {
		t.Fatalf("dep.Service = %v\n%s", paths(out.Symbols), text)
	}
	// Nothing of the project's named Service: none of the dependency's
	// either, but the note says where they are.
	out, text, _ = lookup(t, cs, map[string]any{"query": "Service"})
	for _, s := range out.Symbols {
		if s.Dependency {
			t.Errorf("Service in the workspace scope lists a dependency's symbol:\n%s", text)
		}
	}
	if !strings.Contains(text, `scope "all"`) {
		t.Errorf("Service does not say the dependencies have one:\n%s", text)
	}

	// The rest when asked: exact, then prefix, then the others.
	out, text, _ = lookup(t, cs, map[string]any{"query": "ParseInvocation", "fuzzy": true})
	if got := paths(out.Symbols); len(got) < 3 || got[0] != "a/a.go ParseInvocation" || got[1] != "a/a.go ParseInvocationArgs" || got[2] != "a/a.go MustParseInvocation" {
		t.Fatalf("ParseInvocation with fuzzy = %v\n%s", got, text)
	}
	// No exact name: prefix first, the project only.
	out, text, _ = lookup(t, cs, map[string]any{"query": "parseinvocation"})
	if got := paths(out.Symbols); len(got) != 1 || got[0] != "a/a.go ParseInvocation" {
		t.Fatalf("parseinvocation (another case) = %v\n%s", got, text)
	}
	out, text, _ = lookup(t, cs, map[string]any{"query": "ParseInvoc"})
	if got := paths(out.Symbols); len(got) != 3 || got[0] != "a/a.go ParseInvocation" || got[1] != "a/a.go ParseInvocationArgs" || got[2] != "a/a.go MustParseInvocation" {
		t.Fatalf("ParseInvoc = %v\n%s", got, text)
	}

	// Code before tests, whatever the server's order.
	out, text, _ = lookup(t, cs, map[string]any{"query": "Build"})
	if got := paths(out.Symbols); len(got) != 2 || got[0] != "d/d.go Build" || got[1] != "c/c_test.go Build" || !out.Symbols[1].Test || !strings.Contains(text, "(test)") {
		t.Fatalf("Build = %v\n%s", got, text)
	}
	// The limit, and how to raise it.
	out, text, _ = lookup(t, cs, map[string]any{"query": "Build", "limit": 1})
	if len(out.Symbols) != 1 || !strings.Contains(out.Note, "1 more over the limit (raise limit to 2)") {
		t.Fatalf("Build with limit 1 = %v\n%s", paths(out.Symbols), text)
	}

	// A name only a dependency declares is found there.
	var desc DescribeSymbolOutput
	if text, isErr := call(t, cs, "describe_symbol", map[string]any{"symbol": "dep.Service"}, &desc); isErr || len(desc.Descriptions) != 1 || !desc.Descriptions[0].Symbol.Dependency || desc.Descriptions[0].Doc != "Service serves." {
		t.Fatalf("describe_symbol dep.Service = %+v\n%s", desc, text)
	}
	// Tools that take a name pick the project's declaration over the
	// dependency's.
	// (the declarations are the lines before the count)
	if text, isErr := call(t, cs, "find_references", map[string]any{"symbol": "ParseInvocation"}, nil); isErr ||
		!strings.HasPrefix(text, "a/a.go:6:6 func ParseInvocation(text string) (name, args string, ok bool)\n0 reference(s):") {
		t.Fatalf("find_references ParseInvocation =\n%s", text)
	}
}

// TestServersStartAtFirstContact: the project's servers start when the
// client connects, before any tool asks; Close stops them even while
// they load.
func TestServersStartAtFirstContact(t *testing.T) {
	goState := func(srv *Server) diagnostics.State {
		for _, st := range srv.pool.Status() {
			if st.Name == "go" {
				return st.State
			}
		}
		return ""
	}
	lazy, _ := connectWith(t, Options{Root: Root{Dir: goModule(t)}, Lazy: true})
	srv, _ := connect(t, goModule(t))
	deadline := time.Now().Add(time.Minute)
	for st := goState(srv); st != diagnostics.StateRunning && st != diagnostics.StateStarting; st = goState(srv) {
		if time.Now().After(deadline) {
			t.Fatalf("no tool called, a minute after initialize, gopls is %q", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := goState(lazy); st != diagnostics.StateIdle {
		t.Errorf("with Lazy, after initialize, gopls is %q", st)
	}
	// Closing while gopls loads ends the warm start with it.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if st := goState(srv); st == diagnostics.StateRunning || st == diagnostics.StateStarting {
		t.Errorf("after Close, gopls is %q", st)
	}
}

// TestAnswersStayWithinTheirLimits: outline and describe_symbol list what
// their limit allows and say what they left out and how to get it.
func TestAnswersStayWithinTheirLimits(t *testing.T) {
	root, _ := rankModule(t)
	_, cs := connect(t, root)

	var outline OutlineOutput
	text, isErr := call(t, cs, "outline", map[string]any{"path": "a/a.go", "limit": 1}, &outline)
	if isErr || len(outline.Symbols) != 1 || outline.Symbols[0].Name != "ParseInvocation" || outline.Note != "2 more declarations not listed: raise limit (to 3 for all)" {
		t.Fatalf("outline with limit 1 = %+v\n%s", outline, text)
	}
	var whole OutlineOutput
	if text, isErr = call(t, cs, "outline", map[string]any{"path": "a/a.go"}, &whole); isErr || len(whole.Symbols) != 3 || whole.Note != "" {
		t.Fatalf("outline = %+v\n%s", whole, text)
	}

	var desc DescribeSymbolOutput
	text, isErr = call(t, cs, "describe_symbol", map[string]any{"symbol": "ParseInvocation", "limit": 30}, &desc)
	if isErr || len(desc.Descriptions) != 1 || desc.Descriptions[0].Cut == 0 || !strings.Contains(text, "more bytes of it: raise limit to") {
		t.Fatalf("describe_symbol with limit 30 = %+v\n%s", desc, text)
	}
	d := desc.Descriptions[0]
	if len(d.Signature)+len(d.Doc)+len(d.Hover) > 30 {
		t.Errorf("describe_symbol with limit 30 kept %d bytes: %+v", len(d.Signature)+len(d.Doc)+len(d.Hover), d)
	}
	desc = DescribeSymbolOutput{}
	text, isErr = call(t, cs, "describe_symbol", map[string]any{"symbol": "ParseInvocation"}, &desc)
	if d := desc.Descriptions[0]; isErr || d.Cut != 0 || !strings.HasPrefix(d.Signature, "func ParseInvocation(text string)") || d.Doc != "ParseInvocation splits a command line." || d.Hover != "" {
		t.Fatalf("describe_symbol = %+v\n%s", desc, text)
	}
}
