package diagnostics

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/diagnostics/lsp"
)

func TestGoplsQueries(t *testing.T) {
	p, root := goModule(t)
	ctx := context.Background()
	a := filepath.Join(root, "a", "a.go")
	b := filepath.Join(root, "b", "b.go")

	syms, err := p.Symbols(ctx, "Greet", SymbolQuery{Kinds: []string{"function"}})
	if err != nil || len(syms) == 0 {
		t.Fatalf("Symbols(Greet) = %+v, %v", syms, err)
	}
	if s := syms[0]; s.Name != "Greet" || s.Kind != "function" || s.Location.Path != a || s.Location.Start != (Position{4, 6}) {
		t.Fatalf("Symbols(Greet)[0] = %+v; want the function at a/a.go:4:6", s)
	}

	for _, name := range []string{"Greet", "a.Greet", "example.com/m/a.Greet"} {
		got, err := p.Resolve(ctx, name, "", "go")
		if err != nil || len(got) != 1 || got[0].Location.Path != a || got[0].Location.Start.Line != 4 {
			t.Fatalf("Resolve(%q) = %+v, %v", name, got, err)
		}
	}
	if _, err := p.Resolve(ctx, "b.Greet", "", "go"); err == nil {
		t.Fatal("Resolve(b.Greet) found something; Greet is in package a")
	}
	if got, err := p.Resolve(ctx, "Use", b, ""); err != nil || len(got) != 1 || got[0].Location.Start != (Position{6, 6}) {
		t.Fatalf("Resolve(Use, in b.go) = %+v, %v", got, err)
	}

	refs, err := p.References(ctx, a, Position{4, 6}, false)
	if err != nil || len(refs) != 1 || refs[0].Path != b || refs[0].Start != (Position{7, 11}) {
		t.Fatalf("References = %+v, %v; want the call in b/b.go:7:11", refs, err)
	}
	defs, err := p.Definition(ctx, b, Position{7, 12})
	if err != nil || len(defs) != 1 || defs[0].Path != a || defs[0].Start != (Position{4, 6}) {
		t.Fatalf("Definition = %+v, %v", defs, err)
	}
	hover, err := p.Hover(ctx, b, Position{7, 12})
	if err != nil || !strings.Contains(hover, "func a.Greet(name string) string") || !strings.Contains(hover, "Greet says hello.") {
		t.Fatalf("Hover = %q, %v", hover, err)
	}

	edits, err := p.Rename(ctx, a, Position{4, 6}, "Hello")
	if err != nil || len(edits) != 2 {
		t.Fatalf("Rename = %+v, %v", edits, err)
	}
	if edits[0].Path != a || !strings.Contains(edits[0].NewText, "func Hello(name string)") || edits[1].Path != b || !strings.Contains(edits[1].NewText, "a.Hello(\"x\")") {
		t.Fatalf("Rename edits = %+v", edits)
	}
	if e := edits[1].Edits[0]; e.Start != (Position{7, 11}) || e.NewText != "Hello" {
		t.Fatalf("Rename edit in b.go = %+v", e)
	}
	if disk, _ := os.ReadFile(b); string(disk) != useGo {
		t.Fatal("Rename wrote to disk")
	}

	messy := write(t, filepath.Join(root, "a", "messy.go"), "package a\nfunc  Messy( )int{return 1}\n")
	formatted, err := p.Format(ctx, messy)
	if err != nil || formatted != "package a\n\nfunc Messy() int { return 1 }\n" {
		t.Fatalf("Format = %q, %v", formatted, err)
	}
	if disk, _ := os.ReadFile(messy); !strings.Contains(string(disk), "func  Messy") {
		t.Fatal("Format wrote to disk")
	}

	outline, err := p.DocumentSymbols(ctx, a)
	if err != nil || len(outline) != 1 || outline[0].Name != "Greet" || outline[0].Kind != "function" {
		t.Fatalf("DocumentSymbols = %+v, %v", outline, err)
	}

	rep, err := p.DiagnoseText(ctx, a, "package a\n\nfunc Greet(name string) string {\n\treturn undefinedThing\n}\n", 30*time.Second)
	if err != nil || len(rep.Errors()) != 1 || rep.Errors()[0].Line != 4 || !strings.Contains(rep.Errors()[0].Message, "undefinedThing") {
		t.Fatalf("DiagnoseText = %+v, %v", rep, err)
	}
	if disk, _ := os.ReadFile(a); string(disk) != greetGo {
		t.Fatal("DiagnoseText wrote to disk")
	}
	rep, err = p.Diagnostics(ctx, a, 30*time.Second)
	if err != nil || len(rep.Errors()) != 0 {
		t.Fatalf("after the overlay, Diagnostics = %+v, %v; want the real content back, clean", rep, err)
	}
}

func TestQueriesWithoutAServer(t *testing.T) {
	p, root := fakePool(t, Options{})
	ctx := context.Background()
	file := filepath.Join(root, "x.unknown")
	if _, err := p.References(ctx, file, Position{1, 1}, true); !errors.Is(err, ErrNoServer) {
		t.Fatalf("References = %v; want ErrNoServer", err)
	}
	if _, err := p.Symbols(ctx, "x", SymbolQuery{Language: "cobol"}); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Symbols = %v; want ErrNoServer", err)
	}
	if _, err := p.Symbols(ctx, "x", SymbolQuery{Kinds: []string{"gizmo"}}); err == nil || !strings.Contains(err.Error(), "unknown symbol kind") {
		t.Fatalf("Symbols with a bad kind = %v", err)
	}
	// fakels offers no rename: a clear error, not a hang.
	txt := write(t, filepath.Join(root, "a.txt"), "x")
	if _, err := p.Rename(ctx, txt, Position{1, 1}, "y"); err == nil || !strings.Contains(err.Error(), "fakels does not offer rename") {
		t.Fatalf("Rename = %v", err)
	}
}

// TestGoplsOutlineOfUnopenedFiles: gopls is asked a file's outline,
// references, definitions and hover without the file opened in it (each didOpen costs it a diagnosis of the
// workspace) while the file is as gopls read it at its start; a file
// changed on disk since is opened with its new content, and its outline
// lists what it declares now.
func TestGoplsOutlineOfUnopenedFiles(t *testing.T) {
	p, root := goModule(t)
	ctx := context.Background()
	a := filepath.Join(root, "a", "a.go")
	b := filepath.Join(root, "b", "b.go")
	if _, err := p.Symbols(ctx, "Greet", SymbolQuery{}); err != nil { // gopls started and loaded
		t.Fatal(err)
	}
	_, c, err := p.client(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	outline, err := p.DocumentSymbols(ctx, a)
	if err != nil || len(outline) != 1 || outline[0].Name != "Greet" || outline[0].Location.Start != (Position{4, 6}) {
		t.Fatalf("DocumentSymbols(a.go) = %+v, %v; want Greet at 4:6", outline, err)
	}
	refs, err := p.References(ctx, a, Position{4, 6}, false)
	if err != nil || len(refs) != 1 || refs[0].Path != b || refs[0].Start != (Position{7, 11}) {
		t.Fatalf("References = %+v, %v; want the call in b/b.go:7:11", refs, err)
	}
	defs, err := p.Definition(ctx, b, Position{7, 12})
	if err != nil || len(defs) != 1 || defs[0].Path != a || defs[0].Start != (Position{4, 6}) {
		t.Fatalf("Definition = %+v, %v", defs, err)
	}
	if hover, err := p.Hover(ctx, b, Position{7, 12}); err != nil || !strings.Contains(hover, "Greet says hello.") {
		t.Fatalf("Hover = %q, %v", hover, err)
	}
	for _, f := range []string{a, b} {
		if _, _, open := c.Text(lsp.URIFromPath(f)); open {
			t.Fatalf("%s, unchanged since gopls started, was opened in it for an outline, references, a definition or hover", f)
		}
	}

	write(t, b, useGo+"\n// Later was written after gopls started.\nfunc Later() {}\n")
	syms, text, err := p.Outline(ctx, b)
	var names []string
	for _, s := range syms {
		names = append(names, s.Name)
	}
	if err != nil || strings.Join(names, " ") != "Use Later" || !strings.Contains(string(text), "func Later") {
		t.Fatalf("Outline(b.go) after a change = %v, %v; want Use and Later, and the new text", names, err)
	}
	if got, _, open := c.Text(lsp.URIFromPath(b)); !open || !strings.Contains(string(got), "func Later") {
		t.Fatal("b.go, changed since gopls started, was not opened in it with its new content")
	}
}

// TestOutlineAsksOnceForTheSameText: a file's outline comes from the
// server once while its text stays the same; a change on disk (the same
// size, within the same second) or in an unsaved buffer is asked again,
// and the new declaration is in the next answer.
func TestOutlineAsksOnceForTheSameText(t *testing.T) {
	log := filepath.Join(t.TempDir(), "methods")
	buffers := overlay{}
	p, root := fakePool(t, Options{Files: buffers}, "-log", log)
	ctx := context.Background()
	file := write(t, filepath.Join(root, "a.txt"), "func One\nfunc Two\n")
	outline := func(want string) {
		t.Helper()
		syms, text, err := p.Outline(ctx, file)
		var names []string
		for _, s := range syms {
			names = append(names, s.Name)
		}
		if err != nil || strings.Join(names, " ") != want {
			t.Fatalf("Outline = %v (text %q), %v; want %s", names, text, err, want)
		}
	}
	asked := func() int {
		data, _ := os.ReadFile(log)
		return strings.Count(string(data), "textDocument/documentSymbol")
	}
	outline("One Two")
	outline("One Two")
	if n := asked(); n != 1 {
		t.Errorf("the server was asked %d outlines of an unchanged file; want 1", n)
	}
	fi, _ := os.Stat(file)
	write(t, file, "func One\nfunc Six\n")
	os.Chtimes(file, fi.ModTime(), fi.ModTime()) // the same size and time: only the text tells
	outline("One Six")
	if n := asked(); n != 2 {
		t.Errorf("the server was asked %d outlines after a change; want 2", n)
	}
	buffers[file] = "func One\nfunc Six\nfunc Ten\n"
	outline("One Six Ten")
	if n := asked(); n != 3 {
		t.Errorf("the server was asked %d outlines after an unsaved change; want 3", n)
	}
}

// TestSymbolsMapOnlyWhatIsKept: an unmapped search reads no file (a
// fuzzy server names a hundred for a name); Map reads the files of the
// symbols it maps, once each, and turns the server's UTF-16 characters
// into columns.
func TestSymbolsMapOnlyWhatIsKept(t *testing.T) {
	p, root := goModule(t)
	ctx := context.Background()
	for i := range 5 {
		write(t, filepath.Join(root, "c", fmt.Sprintf("r%d.go", i)), fmt.Sprintf("package c\n\n/* 😀 */ func Reader%d() {}\n", i))
	}
	reads := &countingReader{n: map[string]int{}}
	p.files = reads
	syms, err := p.Symbols(ctx, "Reader", SymbolQuery{Unmapped: true})
	if err != nil || len(syms) != 5 {
		t.Fatalf("Symbols(Reader) = %+v, %v; want the 5 functions", syms, err)
	}
	if reads.total() != 0 {
		t.Errorf("an unmapped search read %v", reads.n)
	}
	if syms[0].Location.Start != (Position{3, 15}) {
		t.Errorf("unmapped start = %+v; want gopls's own line and UTF-16 character, plus one (3:15)", syms[0].Location.Start)
	}
	mapped := p.Map(ctx, syms[:2])
	for _, s := range mapped {
		if s.Location.Start != (Position{3, 14}) || s.Location.End != (Position{3, 21}) {
			t.Errorf("mapped %s at %+v-%+v; want 3:14-3:21 (the emoji is one column)", s.Name, s.Location.Start, s.Location.End)
		}
		// The line it is on comes with it: a caller that shows it reads
		// the file no more.
		if want := "/* 😀 */ func " + s.Name + "() {}"; s.Line != want {
			t.Errorf("mapped %s's line = %q; want %q", s.Name, s.Line, want)
		}
	}
	if reads.total() != 2 || reads.n[mapped[0].Location.Path] != 1 || reads.n[mapped[1].Location.Path] != 1 {
		t.Errorf("mapping two symbols read %v; want their two files once each", reads.n)
	}
}

// countingReader reads from disk and counts the reads of each file.
type countingReader struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingReader) ReadFile(_ context.Context, path string) ([]byte, error) {
	c.mu.Lock()
	c.n[path]++
	c.mu.Unlock()
	return os.ReadFile(path)
}

func (c *countingReader) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

// TestGoplsOutlineOfAnUnchangedFileReadsNothing: gopls's outline of a
// file not open in it is kept with the file's identity on disk; the next
// outline reads nothing while the file stays, and a change (even to the
// same size and modification time) is read and outlined afresh.
func TestGoplsOutlineOfAnUnchangedFileReadsNothing(t *testing.T) {
	p, root := goModule(t)
	ctx := context.Background()
	a := filepath.Join(root, "a", "a.go")
	reads := &countingReader{n: map[string]int{}}
	p.files = reads
	names := func() string {
		t.Helper()
		syms, text, err := p.Outline(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range syms {
			out = append(out, s.Name)
		}
		if !strings.Contains(string(text), "func "+out[0]) {
			t.Errorf("the outline's text %q does not declare %v", text, out)
		}
		return strings.Join(out, " ")
	}
	if got := names(); got != "Greet" {
		t.Fatalf("Outline(a.go) = %s; want Greet", got)
	}
	if got := names(); got != "Greet" || reads.n[a] != 1 {
		t.Errorf("the second Outline(a.go) = %s after %d reads; want Greet, read once", got, reads.n[a])
	}
	old, _ := os.ReadFile(a)
	fi, _ := os.Stat(a)
	write(t, a, strings.Replace(string(old), "func Greet", "func Hallo", 1))
	os.Chtimes(a, fi.ModTime(), fi.ModTime())
	if got := names(); got != "Hallo" {
		t.Errorf("Outline(a.go) after a change of the same size and time = %s; want Hallo", got)
	}
}

// Overlaid makes countingReader a reader of the disk itself.
func (c *countingReader) Overlaid(string) bool { return false }

// TestOutlinesStayWithinTheirBounds: the kept outlines' texts never pass
// maxOutlineBytes, however many files are outlined; the newest is kept.
func TestOutlinesStayWithinTheirBounds(t *testing.T) {
	var o outlines
	text := make([]byte, maxOutlineBytes/5+1)
	for i := range 12 {
		o.put(nil, fmt.Sprintf("/f%d", i), text, nil, fileID{})
		if o.bytes > maxOutlineBytes || o.bytes != len(o.files)*len(text) {
			t.Fatalf("after %d outlines: %d bytes kept in %d files; at most %d", i+1, o.bytes, len(o.files), maxOutlineBytes)
		}
	}
	if _, ok := o.get(nil, "/f11", text); !ok || len(o.files) != 4 {
		t.Errorf("kept %d files, the newest %v; want 4 with the newest", len(o.files), ok)
	}
	o.put(nil, "/f11", text[:10], nil, fileID{})
	if o.bytes != 3*len(text)+10 {
		t.Errorf("after a file's outline was replaced: %d bytes kept; want %d", o.bytes, 3*len(text)+10)
	}
}
