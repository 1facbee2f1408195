package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

const goFile = `package main

import "fmt"

func main() {
	fmt.Println("hello")
	for i := 0; i < 3; i++ {
		fmt.Println(i)
	}
}
`

func TestEditExact(t *testing.T) {
	h := newHarness(t)
	h.write("main.go", goFile)
	res := h.ok("edit", map[string]any{"path": "main.go", "oldString": `fmt.Println("hello")`, "newString": `fmt.Println("bye")`})
	want := strings.Replace(goFile, "hello", "bye", 1)
	if got := h.content("main.go"); got != want {
		t.Errorf("file:\n%s", got)
	}
	if !strings.Contains(res.Output, "Edited main.go.") || !strings.Contains(res.Output, "     6\t\tfmt.Println(\"bye\")") {
		t.Errorf("output %q", res.Output)
	}
	if res.Diff == nil || res.Diff.OldText != goFile || res.Diff.NewText != want || res.Diff.Path != h.path("main.go") {
		t.Errorf("diff %+v", res.Diff)
	}
	if len(res.Locations) != 1 || res.Locations[0].Line != 6 {
		t.Errorf("locations %+v", res.Locations)
	}
	calls := h.permissions()
	if len(calls) != 1 || calls[0].Permission != permission.Edit || calls[0].Subjects[0] != h.path("main.go") {
		t.Fatalf("permission calls %+v", calls)
	}
	if len(calls[0].Diffs) != 1 || calls[0].Diffs[0].NewText != want {
		t.Errorf("the permission request does not carry the diff: %+v", calls[0].Diffs)
	}
}

func TestEditAmbiguousAndReplaceAll(t *testing.T) {
	h := newHarness(t)
	h.write("main.go", goFile)
	h.fails("edit", map[string]any{"path": "main.go", "oldString": "fmt.Println", "newString": "log.Println"},
		"matches 2 places", "lines 6, 8", "replaceAll", "No change")
	if h.content("main.go") != goFile {
		t.Error("an ambiguous edit changed the file")
	}
	res := h.ok("edit", map[string]any{"path": "main.go", "oldString": "fmt.Println", "newString": "log.Println", "replaceAll": true})
	if got := h.content("main.go"); strings.Contains(got, "fmt.Println") || strings.Count(got, "log.Println") != 2 {
		t.Errorf("file:\n%s", got)
	}
	if !strings.Contains(res.Output, "replaced 2 occurrences") {
		t.Errorf("output %q", res.Output)
	}
}

func TestEditTolerantMatchers(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		old, new  string
		want      string
		matchedBy string
	}{
		{
			name:      "trailing whitespace",
			file:      "a := 1  \nb := 2\t\nc := 3\n",
			old:       "a := 1\nb := 2",
			new:       "a := 10\nb := 20",
			want:      "a := 10\nb := 20\nc := 3\n",
			matchedBy: "trailing whitespace",
		},
		{
			name:      "indentation: spaces for tabs, re-indented",
			file:      "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			old:       "    if x {\n        y()\n    }",
			new:       "    if x {\n        y()\n        z()\n    }",
			want:      "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n",
			matchedBy: "indentation",
		},
		{
			name:      "escaped characters written literally",
			file:      "fmt.Println(\"hi\")\nfmt.Println(\"there\")\n",
			old:       `fmt.Println(\"hi\")\nfmt.Println(\"there\")`,
			new:       `fmt.Println(\"hi\")\nfmt.Println(\"you\")`,
			want:      "fmt.Println(\"hi\")\nfmt.Println(\"you\")\n",
			matchedBy: "unescaping",
		},
		{
			name:      "block anchors with a slightly different middle",
			file:      "func g() {\n\ta := compute(1, 2)\n\tb := a * 2\n\treturn b\n}\n\nfunc h() {}\n",
			old:       "func g() {\n\ta := compute(1,2)\n\tb := a*2\n\treturn b\n}",
			new:       "func g() int {\n\treturn compute(1, 2) * 2\n}",
			want:      "func g() int {\n\treturn compute(1, 2) * 2\n}\n\nfunc h() {}\n",
			matchedBy: "first and last lines",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.write("f.go", tt.file)
			res := h.ok("edit", map[string]any{"path": "f.go", "oldString": tt.old, "newString": tt.new})
			if got := h.content("f.go"); got != tt.want {
				t.Errorf("file:\n%q\nwant\n%q", got, tt.want)
			}
			if !strings.Contains(res.Output, tt.matchedBy) {
				t.Errorf("the result does not say how it matched (%s): %q", tt.matchedBy, res.Output)
			}
		})
	}
}

func TestEditTolerantMatchersStayUnique(t *testing.T) {
	h := newHarness(t)
	file := "if a {\n\tx()\n}\n\n    if a {\n        x()\n    }\n"
	h.write("f.go", file)
	// Ignoring indentation, the block occurs twice: refuse to guess.
	h.fails("edit", map[string]any{"path": "f.go", "oldString": "  if a {\n    x()\n  }", "newString": "y()"}, "matches 2 places", "indentation", "lines 1, 5")
	if h.content("f.go") != file {
		t.Error("the file changed")
	}
}

func TestEditNotFoundShowsClosestRegion(t *testing.T) {
	h := newHarness(t)
	h.write("main.go", goFile)
	res := h.fails("edit", map[string]any{"path": "main.go", "oldString": "for i := 0; i < 3; i++ {\n\t\tfmt.Printl(i)\n\t\tcontinue\n\t}", "newString": "x"},
		"not found in main.go", "most like it", "     7\t\tfor i := 0; i < 3; i++ {")
	if !strings.Contains(res.Output, "     8\t\t\tfmt.Println(i)") {
		t.Errorf("region: %q", res.Output)
	}
	h.fails("edit", map[string]any{"path": "main.go", "oldString": "nothing like this at all", "newString": "x"}, "not found", "Read the file")
	// The region is the file's content: not shown when reading it is denied.
	h.deny(permission.Read, "private")
	res = h.fails("edit", map[string]any{"path": "main.go", "oldString": "fmt.Printl(i)\n", "newString": "x"}, "not found")
	if strings.Contains(res.Output, "Println") {
		t.Errorf("a denied read still shows the file: %q", res.Output)
	}
}

func TestEditKeepsFormAndMode(t *testing.T) {
	h := newHarness(t)
	h.write("win.txt", "\ufeffone\r\ntwo\r\nthree\r\n")
	os.Chmod(h.path("win.txt"), 0o755)
	h.ok("edit", map[string]any{"path": "win.txt", "oldString": "two\nthree", "newString": "2\n3\n4"})
	if got := h.content("win.txt"); got != "\ufeffone\r\n2\r\n3\r\n4\r\n" {
		t.Errorf("file %q", got)
	}
	if info, _ := os.Stat(h.path("win.txt")); info.Mode().Perm() != 0o755 {
		t.Errorf("mode %v", info.Mode().Perm())
	}
	// A model that sends CRLF itself is understood too.
	h.ok("edit", map[string]any{"path": "win.txt", "oldString": "2\r\n3", "newString": "two\r\nthree"})
	if got := h.content("win.txt"); got != "\ufeffone\r\ntwo\r\nthree\r\n4\r\n" {
		t.Errorf("file %q", got)
	}
}

func TestEditCreatesAndRefuses(t *testing.T) {
	h := newHarness(t)
	res := h.ok("edit", map[string]any{"path": "new/dir/f.txt", "oldString": "", "newString": "hello\n"})
	if h.content("new/dir/f.txt") != "hello\n" || !strings.Contains(res.Output, "Created new/dir/f.txt") {
		t.Errorf("create: %q", res.Output)
	}
	h.fails("edit", map[string]any{"path": "new/dir/f.txt", "oldString": "", "newString": "x"}, "exists", "write")
	h.fails("edit", map[string]any{"path": "new/dir/f.txt", "oldString": "hello", "newString": "hello"}, "the same")
	h.fails("edit", map[string]any{"path": "missing.txt", "oldString": "a", "newString": "b"}, "does not exist")
	h.fails("edit", map[string]any{"path": "new", "oldString": "a", "newString": "b"}, "not a regular file")
	h.write("bin", "a\x00b")
	h.fails("edit", map[string]any{"path": "bin", "oldString": "a", "newString": "b"}, "binary")
	h.fails("edit", map[string]any{"path": "new/dir/f.txt", "oldString": "a"}, "Invalid input", "newString")
}

func TestEditDenied(t *testing.T) {
	h := newHarness(t)
	h.write("main.go", goFile)
	h.deny(permission.Edit, "leave main alone")
	h.fails("edit", map[string]any{"path": "main.go", "oldString": "hello", "newString": "bye"}, "leave main alone")
	if h.content("main.go") != goFile {
		t.Error("a denied edit was written")
	}
}

func TestEditOutsideAsksBeforeReading(t *testing.T) {
	h := newHarness(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("password=hunter2\n"), 0o600)
	h.deny(permission.Edit, "no")
	res := h.fails("edit", map[string]any{"path": outside, "oldString": "password=hunter", "newString": "x"}, "no")
	if strings.Contains(res.Output, "hunter2") {
		t.Errorf("the refused edit shows the outside file: %q", res.Output)
	}
	calls := h.permissions()
	if len(calls) != 1 || calls[0].Permission != permission.Edit || calls[0].Subjects[0] != outside {
		t.Errorf("permission calls %+v", calls)
	}
}

func TestEditUnsavedInEditor(t *testing.T) {
	h := newHarness(t)
	h.write("open.go", "disk\n")
	env := h.env()
	env.Workspace = &editor{Disk: h.ws, buffers: map[string]string{h.path("open.go"): "buffer\n"}}
	res, err := h.tools["edit"].Run(context.Background(), env, json.RawMessage(`{"path":"open.go","oldString":"buffer","newString":"changed"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Output, "unsaved changes") {
		t.Errorf("result %+v, %v", res, err)
	}
	if h.content("open.go") != "disk\n" {
		t.Error("the file was written under the editor")
	}
}

func TestMultiedit(t *testing.T) {
	h := newHarness(t)
	h.write("main.go", goFile)
	res := h.ok("multiedit", map[string]any{"path": "main.go", "edits": []map[string]any{
		{"oldString": `"hello"`, "newString": `"hi"`},
		{"oldString": "fmt.Println", "newString": "println", "replaceAll": true},
		{"oldString": `println("hi")`, "newString": `println("hi!")`},
	}})
	want := strings.ReplaceAll(strings.Replace(goFile, `"hello"`, `"hi!"`, 1), "fmt.Println", "println")
	if got := h.content("main.go"); got != want {
		t.Errorf("file:\n%s", got)
	}
	if !strings.Contains(res.Output, "3 edits, 4 replacements") || res.Diff.NewText != want {
		t.Errorf("output %q", res.Output)
	}
	if n := len(h.permissions()); n != 1 {
		t.Errorf("%d permission calls, want one for the whole set", n)
	}
}

func TestMultieditAllOrNothing(t *testing.T) {
	h := newHarness(t)
	h.write("main.go", goFile)
	h.fails("multiedit", map[string]any{"path": "main.go", "edits": []map[string]any{
		{"oldString": `"hello"`, "newString": `"hi"`},
		{"oldString": `"hello"`, "newString": `"again"`},
	}}, "Edit 2 of 2", "not found", "No change")
	if h.content("main.go") != goFile {
		t.Error("a failed multiedit changed the file")
	}
	if n := len(h.permissions()); n != 0 {
		t.Errorf("asked %d permissions for an edit that could not apply", n)
	}
	h.fails("multiedit", map[string]any{"path": "main.go", "edits": []map[string]any{}}, "Invalid input")
	// The first edit may create the file, later ones build on it.
	h.ok("multiedit", map[string]any{"path": "new.txt", "edits": []map[string]any{
		{"oldString": "", "newString": "a\nb\n"},
		{"oldString": "b", "newString": "c"},
	}})
	if got := h.content("new.txt"); got != "a\nc\n" {
		t.Errorf("created %q", got)
	}
}

func TestWriteAfterRead(t *testing.T) {
	h := newHarness(t)
	res := h.ok("write", map[string]any{"path": "dir/new.txt", "content": "one\ntwo\n"})
	if h.content("dir/new.txt") != "one\ntwo\n" || !strings.Contains(res.Output, "Created dir/new.txt (2 lines") {
		t.Errorf("create: %q", res.Output)
	}
	// Written by the model, so known to it: it may write again.
	h.ok("write", map[string]any{"path": "dir/new.txt", "content": "three\n"})

	h.write("old.txt", "original\n")
	h.fails("write", map[string]any{"path": "old.txt", "content": "x"}, "not read it", "read it first")
	h.ok("read", map[string]any{"path": "old.txt"})
	h.write("old.txt", "changed by someone\n")
	h.fails("write", map[string]any{"path": "old.txt", "content": "x"}, "changed since you read it", "read it again")
	if h.content("old.txt") != "changed by someone\n" {
		t.Error("a refused write changed the file")
	}
	h.ok("read", map[string]any{"path": "old.txt"})
	res = h.ok("write", map[string]any{"path": "old.txt", "content": "mine\n"})
	if h.content("old.txt") != "mine\n" || res.Diff.OldText != "changed by someone\n" {
		t.Errorf("write after a second read: %q %+v", h.content("old.txt"), res.Diff)
	}
	// An edit counts as having seen the file.
	h.ok("edit", map[string]any{"path": "old.txt", "oldString": "mine", "newString": "ours"})
	h.ok("write", map[string]any{"path": "old.txt", "content": "final\n"})
	if res := h.ok("write", map[string]any{"path": "old.txt", "content": "final\n"}); !strings.Contains(res.Output, "nothing was written") {
		t.Errorf("same content: %q", res.Output)
	}
}

func TestWriteKeepsForm(t *testing.T) {
	h := newHarness(t)
	h.write("win.txt", "\ufeffa\r\nb\r\n")
	os.Chmod(h.path("win.txt"), 0o700)
	h.ok("read", map[string]any{"path": "win.txt"})
	h.ok("write", map[string]any{"path": "win.txt", "content": "x\ny\n"})
	if got := h.content("win.txt"); got != "\ufeffx\r\ny\r\n" {
		t.Errorf("file %q", got)
	}
	if info, _ := os.Stat(h.path("win.txt")); info.Mode().Perm() != 0o700 {
		t.Errorf("mode %v", info.Mode().Perm())
	}
}

func TestWriteDenied(t *testing.T) {
	h := newHarness(t)
	h.deny(permission.Edit, "ask first")
	h.fails("write", map[string]any{"path": "x.txt", "content": "x"}, "ask first")
	if _, err := os.Stat(h.path("x.txt")); err == nil {
		t.Error("a denied write created the file")
	}
}

// BenchmarkEditTool is one edit call on a 10,000-line file, end to end:
// decoding the input, reading, matching, asking, and writing atomically to
// the disk (with fsync) through the Disk workspace.
func BenchmarkEditTool(b *testing.B) {
	dir := b.TempDir()
	ws := tool.NewDisk(dir)
	var src strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&src, "func f%d(x int) int {\n\ty := x * %d\n\treturn y\n}\n\n", i, i)
	}
	path := filepath.Join(dir, "big.go")
	os.WriteFile(path, []byte(src.String()), 0o644)
	var edit tool.Tool
	for _, tl := range tool.Builtins(tool.Options{}) {
		if tl.Info().Name == "edit" {
			edit = tl
		}
	}
	env := &tool.Env{Workspace: ws, Permit: func(context.Context, permission.Call) error { return nil }}
	inputs := [2]json.RawMessage{
		json.RawMessage(`{"path":"big.go","oldString":"\ty := x * 1990\n","newString":"\ty := x * -1990\n"}`),
		json.RawMessage(`{"path":"big.go","oldString":"\ty := x * -1990\n","newString":"\ty := x * 1990\n"}`),
	}
	i := 0
	for b.Loop() {
		res, err := edit.Run(context.Background(), env, inputs[i%2])
		if err != nil || res.IsError {
			b.Fatal(res.Output, err)
		}
		i++
	}
}
