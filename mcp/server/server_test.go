package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/internal/testenv"
)

const (
	greetGo = testenv.GreetGo
	useGo   = testenv.UseGo
)

// writeFile writes a file, making its directories.
var writeFile = testenv.WriteFile

// goModule writes a two-package module and returns its root.
func goModule(t testing.TB) string {
	t.Helper()
	return testenv.GoModule(t, testenv.Dir(t))
}

// connect serves a Server for root over in-memory transports and
// returns a client session to it.
func connect(t testing.TB, root string) (*Server, *mcp.ClientSession) {
	t.Helper()
	return connectWith(t, Options{Root: Root{Dir: root, Source: RootFromFlag}})
}

// connectWith is connect with o's root and servers, gopls on PATH
// (testenv.GoplsEnv).
func connectWith(t testing.TB, o Options) (*Server, *mcp.ClientSession) {
	t.Helper()
	o.Env, _ = testenv.GoplsEnv(t)
	o.Wait, o.Version = 30*time.Second, "test"
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
		srv.Close()
	})
	return srv, cs
}

// call calls a tool and decodes its structured output into out; it
// returns the text and whether the result is an error.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any, out any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if !res.IsError && out != nil {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, data, err)
		}
		var env struct{ SchemaVersion string }
		json.Unmarshal(data, &env)
		if env.SchemaVersion != SchemaVersion {
			t.Fatalf("%s: schemaVersion = %q in %s", name, env.SchemaVersion, data)
		}
	}
	return text.String(), res.IsError
}

// textOnlyTools answer in text alone, with no output schema.
var textOnlyTools = []string{"diagnostics", "check_source", "lookup_symbol", "find_references", "package_api"}

func TestToolsList(t *testing.T) {
	_, cs := connect(t, goModule(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"diagnostics", "check_source", "lookup_symbol", "find_references", "definition", "describe_symbol", "outline", "package_api", "rename_symbol", "format_source", "list_imports", "explain_diagnostic"}
	got := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	for _, name := range want {
		tool := got[name]
		if tool == nil {
			t.Errorf("tool %s is not listed", name)
			continue
		}
		if tool.Description == "" || tool.Annotations == nil || (tool.OutputSchema == nil) != slices.Contains(textOnlyTools, name) {
			t.Errorf("tool %s lacks a description, annotations or output schema (%v answer in text only)", name, textOnlyTools)
		}
		if tool.Annotations != nil && tool.Annotations.ReadOnlyHint != (name != "rename_symbol") {
			t.Errorf("tool %s: readOnlyHint = %v", name, tool.Annotations.ReadOnlyHint)
		}
		in, _ := json.Marshal(tool.InputSchema)
		var sch struct {
			Properties map[string]struct {
				Description string `json:"description"`
				Examples    []any  `json:"examples"`
			} `json:"properties"`
		}
		json.Unmarshal(in, &sch)
		if len(sch.Properties) == 0 {
			t.Errorf("tool %s: input schema has no properties: %s", name, in)
		}
		for p, s := range sch.Properties {
			if s.Description == "" || len(s.Examples) == 0 {
				t.Errorf("tool %s: input %s lacks a description or an example", name, p)
			}
		}
	}
}

func TestToolsAgainstGopls(t *testing.T) {
	root := goModule(t)
	_, cs := connect(t, root)

	if look, _, text, _ := lookup(t, cs, map[string]any{"query": "Greet", "kinds": []string{"function"}}); len(look) == 0 || look[0].Path != "a/a.go" || look[0].Line != 4 || look[0].Column != 6 {
		t.Fatalf("lookup_symbol = %+v, %q", look, text)
	}

	// References are text alone, each place once: the declaration's line,
	// the count, each reference with its line of code. No structured copy
	// repeats them (a client gives its model one of the two).
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_references", Arguments: map[string]any{"symbol": "a.Greet"}})
	if err != nil || res.IsError {
		t.Fatalf("find_references = %v, %v", toolText(res), err)
	}
	if text := toolText(res); text != "a/a.go:4:6 func Greet(name string) string\n1 reference(s):\nb/b.go:7:11: return a.Greet(\"x\")" || res.StructuredContent != nil {
		wire, _ := json.Marshal(res)
		t.Fatalf("find_references sends %s", wire)
	}

	var text string
	var isErr bool
	var def DefinitionOutput
	if text, isErr = call(t, cs, "definition", map[string]any{"symbol": "Use", "path": "b/b.go"}, &def); isErr || len(def.Definitions) != 1 || def.Definitions[0].Path != "b/b.go" || def.Definitions[0].Line != 6 {
		t.Fatalf("definition = %+v, %q", def, text)
	}

	var desc DescribeSymbolOutput
	if text, isErr = call(t, cs, "describe_symbol", map[string]any{"symbol": "Greet"}, &desc); isErr || len(desc.Descriptions) != 1 ||
		!strings.Contains(desc.Descriptions[0].Signature, "func Greet(name string) string") || !strings.Contains(desc.Descriptions[0].Doc, "Greet says hello.") {
		t.Fatalf("describe_symbol = %+v, %q", desc, text)
	}

	var outline OutlineOutput
	if text, isErr = call(t, cs, "outline", map[string]any{"path": "a/a.go"}, &outline); isErr || len(outline.Symbols) != 1 || outline.Symbols[0].Name != "Greet" || outline.Symbols[0].Kind != "function" {
		t.Fatalf("outline = %+v, %q", outline, text)
	}

	// Not found: a code and near matches.
	text, isErr = call(t, cs, "definition", map[string]any{"symbol": "Greeet"}, nil)
	if !isErr || !strings.HasPrefix(text, "MCP-SYMBOL-NOT-FOUND") {
		t.Fatalf("definition of a missing name = %q (isError %v)", text, isErr)
	}
	// Outside the project.
	for _, p := range []string{"../x.go", "/etc/passwd"} {
		text, isErr = call(t, cs, "outline", map[string]any{"path": p}, nil)
		if !isErr || !strings.HasPrefix(text, "MCP-PATH-OUTSIDE-PROJECT") {
			t.Fatalf("outline %s = %q", p, text)
		}
	}
	// Arguments that do not match the schema.
	text, isErr = call(t, cs, "lookup_symbol", map[string]any{"query": 3}, nil)
	if !isErr || !strings.HasPrefix(text, "MCP-INVALID-INPUT") {
		t.Fatalf("lookup_symbol with a number = %q", text)
	}
	// A file no server handles.
	writeFile(t, filepath.Join(root, "notes.cobol"), "x")
	text, isErr = call(t, cs, "outline", map[string]any{"path": "notes.cobol"}, nil)
	if !isErr || !strings.HasPrefix(text, "MCP-NO-LANGUAGE-SERVER") {
		t.Fatalf("outline of a .cobol file = %q", text)
	}
}

// TestAgentChain is what an agent does: check broken text, fix it,
// format it, write it, and find the project clean.
func TestAgentChain(t *testing.T) {
	root := goModule(t)
	_, cs := connect(t, root)

	broken := "package a\n\nfunc Twice(n int) int {\n\treturn n * undefinedThing\n}\n"
	text, isErr := call(t, cs, "check_source", map[string]any{"path": "a/twice.go", "source": broken}, nil)
	if isErr || !strings.HasPrefix(text, "a/twice.go: 1 error\n4:13 [UndeclaredName]: ") || !strings.Contains(text, "undefinedThing") {
		t.Fatalf("check_source of broken text = %q", text)
	}
	if _, err := os.Stat(filepath.Join(root, "a", "twice.go")); !os.IsNotExist(err) {
		t.Fatal("check_source wrote the file")
	}

	fixed := "package a\nfunc Twice(n int) int {\nreturn n*2}\n"
	if text, isErr = call(t, cs, "check_source", map[string]any{"path": "a/twice.go", "source": fixed}, nil); isErr || text != "a/twice.go: no problems" {
		t.Fatalf("check_source of fixed text = %q", text)
	}
	var f FormatSourceOutput
	text, isErr = call(t, cs, "format_source", map[string]any{"path": "a/twice.go", "source": fixed}, &f)
	want := "package a\n\nfunc Twice(n int) int {\n\treturn n * 2\n}\n"
	if isErr || f.Formatted != want || !f.Changed || !strings.Contains(f.Diff, "+\treturn n * 2") {
		t.Fatalf("format_source = %+v, %q", f, text)
	}
	writeFile(t, filepath.Join(root, "a", "twice.go"), f.Formatted)

	if text, isErr = call(t, cs, "diagnostics", map[string]any{}, nil); isErr || text != "3 files checked: no problems" {
		t.Fatalf("diagnostics of the project = %q", text)
	}
	// A broken file on disk shows.
	writeFile(t, filepath.Join(root, "b", "b.go"), strings.Replace(useGo, `a.Greet("x")`, `a.Greet(1)`, 1))
	if text, isErr = call(t, cs, "diagnostics", map[string]any{"paths": []string{"b"}, "severity": "error"}, nil); isErr || !strings.HasPrefix(text, "b/b.go: 1 error\n") {
		t.Fatalf("diagnostics of b = %q", text)
	}
}

func TestPanicAnswersInternalErrorAndServes(t *testing.T) {
	srv, cs := connect(t, goModule(t))
	mcp.AddTool(srv.MCP(), &mcp.Tool{Name: "boom", InputSchema: inputSchema[OutlineInput]()}, func(context.Context, *mcp.CallToolRequest, OutlineInput) (*mcp.CallToolResult, any, error) {
		panic("boom")
	})
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "boom", Arguments: map[string]any{"path": "x"}})
	if err == nil || !strings.Contains(err.Error(), "-32603") && !strings.Contains(err.Error(), "MCP-INTERNAL") {
		t.Fatalf("a panicking tool = %v; want a -32603 error", err)
	}
	var outline OutlineOutput
	if text, isErr := call(t, cs, "outline", map[string]any{"path": "a/a.go"}, &outline); isErr || len(outline.Symbols) != 1 {
		t.Fatalf("after the panic, outline = %q", text)
	}
}
