package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPRenameNeverWritesThroughALinkOutside is finding 5: a package
// directory that is a link to a directory outside the project
// (linkdir -> ../outside) must not let rename_symbol apply: true write
// there.
func TestMCPRenameNeverWritesThroughALinkOutside(t *testing.T) {
	e := mcpEnv(t)
	outside := filepath.Join(e.home, "outside")
	e.write(filepath.Join(outside, "l.go"), "package linkdir\n\n// Shout says it loudly.\nfunc Shout(s string) string {\n\treturn s + \"!\"\n}\n")
	if err := os.Symlink("../outside", filepath.Join(e.workspace, "linkdir")); err != nil {
		t.Fatal(err)
	}
	e.write("c/c.go", "package c\n\nimport \"example.com/m/linkdir\"\n\n// Use shouts.\nfunc Use() string {\n\treturn linkdir.Shout(\"x\")\n}\n")
	before, _ := os.ReadFile(filepath.Join(outside, "l.go"))
	useBefore, _ := os.ReadFile(filepath.Join(e.workspace, "c", "c.go"))

	cs, ctx, _ := connectMCP(t, e, e.workspace)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "rename_symbol", Arguments: map[string]any{"symbol": "linkdir.Shout", "new_name": "Yell", "apply": true}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(toolText(res), "MCP-PATH-OUTSIDE-PROJECT") {
		t.Errorf("rename through the link = %s, want MCP-PATH-OUTSIDE-PROJECT", toolText(res))
	}
	if after, _ := os.ReadFile(filepath.Join(outside, "l.go")); string(after) != string(before) {
		t.Errorf("the file outside the project was written:\n%s", after)
	}
	if after, _ := os.ReadFile(filepath.Join(e.workspace, "c", "c.go")); string(after) != string(useBefore) {
		t.Errorf("a file inside was written although the rename was refused:\n%s", after)
	}
	if fi, err := os.Lstat(filepath.Join(e.workspace, "linkdir")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("linkdir is no longer a link: %v %v", fi, err)
	}
}

// TestMCPRenameKeepsASymlinkedFileALink: a rename that edits a .go file
// which is a link to another file inside the project writes the target
// and leaves the link a link, and says so.
func TestMCPRenameKeepsASymlinkedFileALink(t *testing.T) {
	e := mcpEnv(t)
	e.write("_shared/extra.go", "package a\n\n// Twice greets twice.\nfunc Twice() string {\n\treturn Greet(\"a\") + Greet(\"b\")\n}\n")
	link := filepath.Join(e.workspace, "a", "extra.go")
	if err := os.Symlink("../_shared/extra.go", link); err != nil {
		t.Fatal(err)
	}
	cs, ctx, _ := connectMCP(t, e, e.workspace)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "rename_symbol", Arguments: map[string]any{"symbol": "a.Greet", "new_name": "Hello", "apply": true}})
	if err != nil || res.IsError {
		t.Fatalf("rename_symbol = %v, %v", toolText(res), err)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("a/extra.go was replaced by a regular file: %v, %v", fi, err)
	}
	if data, _ := os.ReadFile(filepath.Join(e.workspace, "_shared", "extra.go")); !strings.Contains(string(data), `Hello("a") + Hello("b")`) {
		t.Errorf("the link's target was not renamed in:\n%s", data)
	}
	if data, _ := os.ReadFile(filepath.Join(e.workspace, "b", "b.go")); !strings.Contains(string(data), `a.Hello("x")`) {
		t.Errorf("b.go was not renamed in:\n%s", data)
	}
	if !strings.Contains(toolText(res), "symbolic link") {
		t.Errorf("the result does not say a link was written through:\n%s", toolText(res))
	}
}
