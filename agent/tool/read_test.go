package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

func numbered(from, to int, line func(int) string) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, line(i))
	}
	return b.String()
}

func lines(n int, line func(int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(line(i) + "\n")
	}
	return b.String()
}

func TestReadNumberedLines(t *testing.T) {
	h := newHarness(t)
	h.write("a.go", "package a\n\nfunc A() {}\n")
	res := h.ok("read", map[string]any{"path": "a.go"})
	if want := "     1\tpackage a\n     2\t\n     3\tfunc A() {}"; res.Output != want {
		t.Errorf("output:\n%q\nwant\n%q", res.Output, want)
	}
	if res.Title != "a.go" || len(res.Locations) != 1 || res.Locations[0].Path != h.path("a.go") {
		t.Errorf("title %q, locations %+v", res.Title, res.Locations)
	}
	// An absolute path works the same.
	if abs := h.ok("read", map[string]any{"path": h.path("a.go")}); abs.Output != res.Output {
		t.Errorf("absolute path gave %q", abs.Output)
	}
	calls := h.permissions()
	if len(calls) != 2 || calls[0].Permission != permission.Read || calls[0].Subjects[0] != h.path("a.go") {
		t.Errorf("permission calls = %+v, want read of the absolute path", calls)
	}
}

func TestReadOffsetLimitAndLineCap(t *testing.T) {
	h := newHarness(t)
	line := func(i int) string { return fmt.Sprintf("line %d", i) }
	h.write("long.txt", lines(2500, line))

	res := h.ok("read", map[string]any{"path": "long.txt"})
	if !strings.HasPrefix(res.Output, numbered(1, 2000, line)) {
		t.Errorf("the first call does not show lines 1-2000")
	}
	if !strings.Contains(res.Output, "Showing lines 1-2000 of 2500") || !strings.Contains(res.Output, "offset=2001") {
		t.Errorf("no continuation note: %q", res.Output[len(res.Output)-200:])
	}
	res = h.ok("read", map[string]any{"path": "long.txt", "offset": 2001})
	if want := strings.TrimSuffix(numbered(2001, 2500, line), "\n"); res.Output != want {
		t.Errorf("offset 2001: got %q...", res.Output[:100])
	}
	res = h.ok("read", map[string]any{"path": "long.txt", "offset": 10, "limit": 3})
	if want := numbered(10, 12, line); !strings.HasPrefix(res.Output, want) || !strings.Contains(res.Output, "offset=13") {
		t.Errorf("offset 10 limit 3: %q", res.Output)
	}
	if res.Title != "long.txt:10-12" {
		t.Errorf("title %q", res.Title)
	}
	h.fails("read", map[string]any{"path": "long.txt", "offset": 2501}, "past the end", "2500 lines")
}

func TestReadLineLengthAndByteCaps(t *testing.T) {
	h := newHarness(t)
	h.write("wide.txt", strings.Repeat("x", 5000)+"\nshort\n")
	res := h.ok("read", map[string]any{"path": "wide.txt"})
	first, _, _ := strings.Cut(res.Output, "\n")
	if len(first) > 2100 || !strings.Contains(first, "line cut: 3000 more bytes") {
		t.Errorf("long line not cut: %d bytes, %q", len(first), first[len(first)-60:])
	}
	if !strings.Contains(res.Output, "     2\tshort") || !strings.Contains(res.Output, "1 lines were longer than 2000") {
		t.Errorf("output: %q", res.Output[2000:])
	}

	// 300 lines of 1900 bytes is over 256 KiB: output stops early.
	h.write("big.txt", lines(300, func(i int) string { return strings.Repeat(string(rune('a'+i%26)), 1900) }))
	res = h.ok("read", map[string]any{"path": "big.txt"})
	if len(res.Output) > 256<<10+500 {
		t.Errorf("output is %d bytes, over the cap", len(res.Output))
	}
	if !strings.Contains(res.Output, "Output stopped at 256 KiB") {
		t.Errorf("no byte-cap note: %q", res.Output[len(res.Output)-200:])
	}
	var meta struct{ To int }
	json.Unmarshal(res.Metadata, &meta)
	if meta.To < 100 || meta.To >= 300 || !strings.Contains(res.Output, fmt.Sprintf("offset=%d", meta.To+1)) {
		t.Errorf("stopped at line %d; output end %q", meta.To, res.Output[len(res.Output)-200:])
	}
}

func TestReadTextForms(t *testing.T) {
	h := newHarness(t)
	h.write("win.txt", "\ufeffone\r\ntwo\r\n")
	res := h.ok("read", map[string]any{"path": "win.txt"})
	if want := "     1\tone\n     2\ttwo"; res.Output != want {
		t.Errorf("CRLF/BOM file: %q, want %q", res.Output, want)
	}
	h.write("empty.txt", "")
	if res := h.ok("read", map[string]any{"path": "empty.txt"}); !strings.Contains(res.Output, "empty") {
		t.Errorf("empty file: %q", res.Output)
	}
}

func TestReadRefusesBinary(t *testing.T) {
	h := newHarness(t)
	h.write("prog", "\x7fELF\x02\x01\x01\x00\x00\x00\x00garbage")
	h.fails("read", map[string]any{"path": "prog"}, "binary file", "xxd")
	h.write("lib.so", "looks like text")
	h.fails("read", map[string]any{"path": "lib.so"}, "binary file")
}

func TestReadImage(t *testing.T) {
	h := newHarness(t)
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	h.write("shot.png", buf.String())
	res := h.ok("read", map[string]any{"path": "shot.png"})
	if len(res.Attachments) != 1 {
		t.Fatalf("attachments = %+v", res.Attachments)
	}
	a := res.Attachments[0]
	if a.MIME != "image/png" || !bytes.Equal(a.Data, buf.Bytes()) || a.Path != h.path("shot.png") {
		t.Errorf("attachment = %s %s %d bytes", a.MIME, a.Path, len(a.Data))
	}
	if !strings.Contains(res.Output, "attached") {
		t.Errorf("output %q", res.Output)
	}
}

func TestReadDirectory(t *testing.T) {
	h := newHarness(t)
	h.write("dir/b.txt", "b")
	h.write("dir/a.txt", "a")
	h.write("dir/sub/c.txt", "c")
	res := h.ok("read", map[string]any{"path": "dir"})
	if want := "dir is a directory with 3 entries:\na.txt\nb.txt\nsub/"; res.Output != want {
		t.Errorf("listing %q, want %q", res.Output, want)
	}
}

func TestReadMissingSuggests(t *testing.T) {
	h := newHarness(t)
	h.write("src/handler.go", "package src")
	h.fails("read", map[string]any{"path": "src/handlr.go"}, "does not exist")
	h.fails("read", map[string]any{"path": "src/handler.ts"}, "does not exist", "Did you mean: src/handler.go?")
	h.fails("read", map[string]any{"path": ""}, "path is empty")
}

func TestReadDenied(t *testing.T) {
	h := newHarness(t)
	h.write("secret.env", "TOKEN=1")
	h.deny(permission.Read, "not the secrets")
	res := h.fails("read", map[string]any{"path": "secret.env"}, "not the secrets")
	if strings.Contains(res.Output, "TOKEN") {
		t.Errorf("a denied read shows the file: %q", res.Output)
	}
}

func TestReadInvalidInput(t *testing.T) {
	h := newHarness(t)
	h.fails("read", `{"path": 3}`, "Invalid input for read")
	h.fails("read", `{"path": "a", "offset": -1}`, "Invalid input for read")
	h.fails("read", `{"path": "a", "bogus": 1}`, "Invalid input for read", "bogus")
	h.fails("read", `[1]`, "must be a JSON object")
	h.fails("read", `{`, "not valid JSON")
	h.fails("read", ``, "Invalid input", "path")
}

// editor is a Workspace with an open, modified buffer: reads see it.
type editor struct {
	*tool.Disk
	buffers map[string]string
}

func (e *editor) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if s, ok := e.buffers[path]; ok {
		return []byte(s), nil
	}
	return e.Disk.ReadFile(ctx, path)
}

func (e *editor) WriteFile(ctx context.Context, path string, content []byte) error {
	if _, ok := e.buffers[path]; ok {
		return fmt.Errorf("write %s: %w", path, tool.ErrUnsaved)
	}
	return e.Disk.WriteFile(ctx, path, content)
}

func TestReadSeesUnsavedBuffer(t *testing.T) {
	h := newHarness(t)
	h.write("open.go", "on disk\n")
	env := h.env()
	env.Workspace = &editor{Disk: h.ws, buffers: map[string]string{h.path("open.go"): "in the editor\n"}}
	res, err := h.tools["read"].Run(context.Background(), env, json.RawMessage(`{"path":"open.go"}`))
	if err != nil || res.Output != "     1\tin the editor" {
		t.Errorf("read = %q, %v; want the buffer", res.Output, err)
	}
}

func TestReadSavedOutputWithoutAsking(t *testing.T) {
	h := newHarness(t)
	h.deny(permission.Read, "no")
	dir := tool.OutputDir(h.id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(dir, "bash-1.txt")
	os.WriteFile(saved, []byte("full output\n"), 0o600)
	if res := h.ok("read", map[string]any{"path": saved}); res.Output != "     1\tfull output" {
		t.Errorf("read of a saved output: %q", res.Output)
	}
	if calls := h.permissions(); len(calls) != 0 {
		t.Errorf("asked %+v for darman's own output", calls)
	}
}
