package tool_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/permission"
)

const appPy = `import sys


def greet():
    print("Hi")


def main():
    greet()
    return 0
`

func TestApplyPatchAddUpdateDelete(t *testing.T) {
	h := newHarness(t)
	h.write("src/app.py", appPy)
	h.write("obsolete.txt", "old\n")
	patch := `*** Begin Patch
*** Add File: docs/hello.txt
+Hello world
+second line
*** Update File: src/app.py
@@ def greet():
-    print("Hi")
+    print("Hello, world!")
@@ def main():
     greet()
-    return 0
+    return 1
*** Delete File: obsolete.txt
*** End Patch`
	res := h.ok("apply_patch", map[string]any{"input": patch})
	if got := h.content("docs/hello.txt"); got != "Hello world\nsecond line\n" {
		t.Errorf("added file %q", got)
	}
	want := strings.Replace(strings.Replace(appPy, `print("Hi")`, `print("Hello, world!")`, 1), "return 0", "return 1", 1)
	if got := h.content("src/app.py"); got != want {
		t.Errorf("updated file:\n%s", got)
	}
	if _, err := os.Stat(h.path("obsolete.txt")); !os.IsNotExist(err) {
		t.Errorf("deleted file: %v", err)
	}
	if want := "Applied the patch:\nA docs/hello.txt\nM src/app.py\nD obsolete.txt"; res.Output != want {
		t.Errorf("output %q", res.Output)
	}
	calls := h.permissions()
	if len(calls) != 1 || calls[0].Permission != permission.Edit || len(calls[0].Subjects) != 3 {
		t.Errorf("permission calls %+v, want one edit call for the three files", calls)
	}
	if len(res.Locations) != 3 {
		t.Errorf("locations %+v", res.Locations)
	}
}

func TestApplyPatchMoveEndOfFileAndWhitespace(t *testing.T) {
	h := newHarness(t)
	h.write("a.txt", "one  \ntwo\nthree\ntwo\n")
	patch := `*** Begin Patch
*** Update File: a.txt
*** Move to: b/a.txt
 one
-two
+2
@@
-two
+TWO
+four
*** End of File
*** End Patch`
	res := h.ok("apply_patch", map[string]any{"input": patch})
	if _, err := os.Stat(h.path("a.txt")); !os.IsNotExist(err) {
		t.Error("the moved file is still there")
	}
	if got := h.content("b/a.txt"); got != "one  \n2\nthree\nTWO\nfour\n" {
		t.Errorf("moved file %q", got)
	}
	if !strings.Contains(res.Output, "R a.txt → b/a.txt") {
		t.Errorf("output %q", res.Output)
	}
}

func TestApplyPatchFailedContextLeavesNothing(t *testing.T) {
	h := newHarness(t)
	h.write("src/app.py", appPy)
	h.write("keep.txt", "keep\n")
	patch := `*** Begin Patch
*** Add File: new.txt
+new
*** Update File: src/app.py
@@ def greet():
-    print("Hi")
+    print("Hey")
*** Update File: keep.txt
-this line is not there
+x
*** Delete File: src/app.py.bak
*** End Patch`
	res := h.fails("apply_patch", map[string]any{"input": patch}, "keep.txt does not apply", "this line is not there", "Nothing was changed")
	_ = res
	if _, err := os.Stat(h.path("new.txt")); !os.IsNotExist(err) {
		t.Error("the added file was created")
	}
	if h.content("src/app.py") != appPy || h.content("keep.txt") != "keep\n" {
		t.Error("a file was changed")
	}
	if n := len(h.permissions()); n != 0 {
		t.Errorf("asked %d times for a patch that does not apply", n)
	}
	h.fails("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: src/app.py\n@@ def missing():\n-x\n+y\n*** End Patch"}, `context line "def missing():" was not found`)
	h.fails("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch"}, "does not exist")
}

func TestApplyPatchRollsBackAFailedWrite(t *testing.T) {
	h := newHarness(t)
	h.write("a.txt", "a\n")
	h.write("b.txt", "b\n")
	env := h.env()
	// b.txt is open with unsaved changes: its write fails after a.txt's.
	env.Workspace = &editor{Disk: h.ws, buffers: map[string]string{h.path("b.txt"): "b\n"}}
	patch := "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** Add File: c.txt\n+c\n*** End Patch"
	input, _ := json.Marshal(map[string]string{"input": patch})
	res, err := h.tools["apply_patch"].Run(context.Background(), env, input)
	if err != nil || !res.IsError || !strings.Contains(res.Output, "unsaved changes") || !strings.Contains(res.Output, "restored") {
		t.Fatalf("result %+v, %v", res, err)
	}
	if h.content("a.txt") != "a\n" || h.content("b.txt") != "b\n" {
		t.Errorf("a.txt %q, b.txt %q: not restored", h.content("a.txt"), h.content("b.txt"))
	}
	if _, err := os.Stat(h.path("c.txt")); !os.IsNotExist(err) {
		t.Error("c.txt was written")
	}
}

func TestApplyPatchForms(t *testing.T) {
	h := newHarness(t)
	h.write("win.txt", "\ufeffone\r\ntwo\r\n")
	// Wrapped the way models sometimes wrap it for a shell.
	patch := "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: win.txt\n one\n-two\n+three\n*** End Patch\nEOF\n"
	h.ok("apply_patch", map[string]any{"input": patch})
	if got := h.content("win.txt"); got != "\ufeffone\r\nthree\r\n" {
		t.Errorf("file %q", got)
	}
}

func TestApplyPatchRefusals(t *testing.T) {
	h := newHarness(t)
	h.write("a.txt", "a\n")
	for _, tt := range []struct{ patch, want string }{
		{"*** Update File: a.txt\n-a\n+b\n*** End Patch", "must start with"},
		{"*** Begin Patch\n*** Update File: a.txt\n-a\n+b", "must end with"},
		{"*** Begin Patch\n*** End Patch", "no file operations"},
		{"*** Begin Patch\n*** Add File: x.txt\nno plus\n*** End Patch", `starts with "+"`},
		{"*** Begin Patch\n*** Update File: a.txt\n*a\n*** End Patch", `starts with " ", "-" or "+"`},
		{"*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch", "line 2: expected"},
		{"*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** Update File: a.txt\n-b\n+c\n*** End Patch", "more than once"},
		{"*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch", "not read it"},
		{"*** Begin Patch\n*** Update File: missing.txt\n-a\n+b\n*** End Patch", "does not exist"},
	} {
		h.fails("apply_patch", map[string]any{"input": tt.patch}, tt.want)
	}
	if h.content("a.txt") != "a\n" {
		t.Error("a refused patch changed a file")
	}
	h.deny(permission.Edit, "not today")
	h.fails("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** End Patch"}, "not today")
	if h.content("a.txt") != "a\n" {
		t.Error("a denied patch changed a file")
	}
}
