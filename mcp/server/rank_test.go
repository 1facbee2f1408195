package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
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

// listed is a symbol as lookup_symbol's text lists it.
type listed struct {
	Path             string
	Line, Column     int
	Decl             string // the declaration's line, or kind and name
	Dependency, Test bool
}

// symbolLine is a line of lookup_symbol's text that lists a symbol.
var symbolLine = regexp.MustCompile(`^(\S+):(\d+):(\d+) (.*)$`)

// lookup calls lookup_symbol and returns the symbols its text lists,
// its other lines (what it left out), its text and the size of the
// whole result as it crosses the wire. The answer is text alone.
func lookup(t *testing.T, cs *mcp.ClientSession, args map[string]any) (syms []listed, note, text string, size int) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup_symbol", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("lookup_symbol %v = %v, %v", args, toolText(res), err)
	}
	data, _ := json.Marshal(res)
	if res.StructuredContent != nil {
		t.Errorf("lookup_symbol %v sends a structured copy: %s", args, data)
	}
	text = toolText(res)
	var rest []string
	for _, line := range strings.Split(text, "\n") {
		m := symbolLine.FindStringSubmatch(line)
		if m == nil {
			rest = append(rest, line)
			continue
		}
		l, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[3])
		syms = append(syms, listed{Path: m[1], Line: l, Column: c, Decl: m[4],
			Dependency: strings.Contains(m[4], " (dependency"), Test: strings.HasSuffix(m[4], " (test)")})
	}
	return syms, strings.Join(rest, "\n"), text, len(data)
}

// declName is the name a Go declaration's line declares.
func declName(decl string) string {
	d := strings.TrimPrefix(decl, "func ")
	if strings.HasPrefix(d, "(") { // a method's receiver
		if i := strings.Index(d, ") "); i > 0 {
			d = d[i+2:]
		}
	}
	d = strings.TrimPrefix(d, "type ")
	if i := strings.IndexAny(d, "([ "); i >= 0 {
		d = d[:i]
	}
	return d
}

func paths(syms []listed) []string {
	var out []string
	for _, s := range syms {
		out = append(out, fmt.Sprintf("%s %s", s.Path, declName(s.Decl)))
	}
	return out
}

func TestLookupRanksLikeAnExpert(t *testing.T) {
	root, dep := rankModule(t)
	_, cs := connect(t, root)

	// An exact, unique name: that declaration alone, in a small answer
	// that says what it left out and how to get it.
	out, note, text, size := lookup(t, cs, map[string]any{"query": "ParseInvocation"})
	if len(out) != 1 || out[0].Path != "a/a.go" || out[0].Line != 6 || out[0].Dependency {
		t.Fatalf("ParseInvocation = %v\n%s", paths(out), text)
	}
	// Its place, its signature, and what was left out with the input
	// that lists it: nothing more.
	if text != "a/a.go:6:6 func ParseInvocation(text string) (name, args string, ok bool)\n+2 fuzzy (fuzzy: true)" {
		t.Errorf("ParseInvocation text =\n%s", text)
	}
	if size > 1000 {
		t.Errorf("the exact-name answer is %d bytes on the wire, over 1 KB:\n%s", size, text)
	}

	// Dependencies when asked: the exact ones, the project's first.
	out, note, text, _ = lookup(t, cs, map[string]any{"query": "ParseInvocation", "scope": "all"})
	if got := paths(out); len(got) != 2 || got[0] != "a/a.go ParseInvocation" || !out[1].Dependency || out[1].Path != filepath.Join(dep, "dep.go") {
		t.Fatalf("ParseInvocation in all = %v\n%s", got, text)
	}
	if !strings.Contains(text, "(dependency: example.com/dep)") {
		t.Errorf("a dependency's line does not say so:\n%s", text)
	}
	out, note, text, _ = lookup(t, cs, map[string]any{"query": "ParseInvocation", "scope": "dependencies"})
	if len(out) != 1 || !out[0].Dependency {
		t.Fatalf("ParseInvocation in dependencies = %v\n%s", paths(out), text)
	}
	// ... or when the name is qualified by the dependency's package.
	out, note, text, _ = lookup(t, cs, map[string]any{"query": "dep.Service"})
	if len(out) != 1 || declName(out[0].Decl) != "Service" || !out[0].Dependency {
		t.Fatalf("dep.Service = %v\n%s", paths(out), text)
	}
	// Nothing of the project's named Service: none of the dependency's
	// either, but the note says where they are.
	out, note, text, _ = lookup(t, cs, map[string]any{"query": "Service"})
	for _, s := range out {
		if s.Dependency {
			t.Errorf("Service in the workspace scope lists a dependency's symbol:\n%s", text)
		}
	}
	if !strings.HasSuffix(text, `in the project`+"\n"+`dependencies not searched (scope: "all")`) {
		t.Errorf("Service does not say the dependencies have one:\n%s", text)
	}

	// The rest when asked: exact, then prefix, then the others.
	out, note, text, _ = lookup(t, cs, map[string]any{"query": "ParseInvocation", "fuzzy": true})
	if got := paths(out); len(got) < 3 || got[0] != "a/a.go ParseInvocation" || got[1] != "a/a.go ParseInvocationArgs" || got[2] != "a/a.go MustParseInvocation" {
		t.Fatalf("ParseInvocation with fuzzy = %v\n%s", got, text)
	}
	// No exact name: prefix first, the project only.
	out, note, text, _ = lookup(t, cs, map[string]any{"query": "parseinvocation"})
	if got := paths(out); len(got) != 1 || got[0] != "a/a.go ParseInvocation" {
		t.Fatalf("parseinvocation (another case) = %v\n%s", got, text)
	}
	out, note, text, _ = lookup(t, cs, map[string]any{"query": "ParseInvoc"})
	if got := paths(out); len(got) != 3 || got[0] != "a/a.go ParseInvocation" || got[1] != "a/a.go ParseInvocationArgs" || got[2] != "a/a.go MustParseInvocation" {
		t.Fatalf("ParseInvoc = %v\n%s", got, text)
	}

	// Code before tests, whatever the server's order.
	out, note, text, _ = lookup(t, cs, map[string]any{"query": "Build"})
	if got := paths(out); len(got) != 2 || got[0] != "d/d.go Build" || got[1] != "c/c_test.go Build" || !out[1].Test || !strings.Contains(text, "(test)") {
		t.Fatalf("Build = %v\n%s", got, text)
	}
	// The limit, and how to raise it.
	out, note, text, _ = lookup(t, cs, map[string]any{"query": "Build", "limit": 1})
	if len(out) != 1 || note != "+1 more (limit: 2)" {
		t.Fatalf("Build with limit 1 = %v\n%s", paths(out), text)
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
