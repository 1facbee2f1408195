package server

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/testenv"
)

// TestPartialAnswerNamesTheMissingPart: gopls answers, a second server
// (the test language server, reporting an error-level showMessage while
// loading) cannot load the project. A workspace-wide lookup answers with
// gopls's symbols and says the other part is missing, with that server's
// words; a query for the broken server's file alone fails with
// MCP-LANGUAGE-SERVER-UNAVAILABLE.
func TestPartialAnswerNamesTheMissingPart(t *testing.T) {
	fakels := testenv.Program(t, "github.com/darman-dev/darman/diagnostics/testdata/fakels")
	root := goModule(t)
	writeFile(t, filepath.Join(root, "fake.marker"), "")
	writeFile(t, filepath.Join(root, "notes.txt"), "fine\n")
	_, cs := connectWith(t, Options{
		Root: Root{Dir: root, Source: RootFromFlag},
		Servers: map[string]config.LSP{"fake": {
			Command:     []string{fakels, "-load-error", "fakels: no toolchain for this project"},
			Extensions:  []string{".txt"},
			RootMarkers: []string{"fake.marker"},
		}},
	})

	found, note, text, _ := lookup(t, cs, map[string]any{"query": "Greet"})
	if len(found) == 0 || declName(found[0].Decl) != "Greet" {
		t.Fatalf("lookup_symbol = %+v, %q", found, text)
	}
	if strings.Count(note, "not in this answer: ") != 1 || !strings.Contains(note, `fakels said: "fakels: no toolchain for this project"`) {
		t.Errorf("lookup_symbol's missing part = %q", note)
	}
	if !strings.Contains(text, "not in this answer: MCP-LANGUAGE-SERVER-UNAVAILABLE: fakels reported an error while loading the workspace: fix what it says") {
		t.Errorf("lookup_symbol's text does not name the missing part:\n%s", text)
	}

	text, isErr := call(t, cs, "find_references", map[string]any{"symbol": "a.Greet"}, nil)
	if isErr || !strings.Contains(text, "\n1 reference(s):\n") {
		t.Errorf("find_references of a name gopls declares = %q (isError %v)", text, isErr)
	}

	text, isErr = call(t, cs, "diagnostics", map[string]any{"paths": []string{"a/a.go", "notes.txt"}}, nil)
	if isErr || !strings.HasPrefix(text, "2 files checked: ") || strings.Count(text, "not in this answer: ") != 1 || !strings.Contains(text, "(1 file(s) not checked)") {
		t.Fatalf("diagnostics = %q (isError %v)", text, isErr)
	}
	if strings.Contains(text, "notes.txt: not checked") || !strings.Contains(text, "not in this answer: MCP-LANGUAGE-SERVER-UNAVAILABLE: fakels") {
		t.Errorf("diagnostics' text:\n%s", text)
	}

	text, isErr = call(t, cs, "diagnostics", map[string]any{"paths": []string{"notes.txt"}}, nil)
	if !isErr || !strings.HasPrefix(text, "MCP-LANGUAGE-SERVER-UNAVAILABLE: fakels reported an error while loading the workspace: fix what it says (fakels said: \"fakels: no toolchain for this project\")") {
		t.Errorf("diagnostics of the broken server's file = %q (isError %v)", text, isErr)
	}
	text, isErr = call(t, cs, "outline", map[string]any{"path": "notes.txt"}, nil)
	if !isErr || !strings.HasPrefix(text, "MCP-LANGUAGE-SERVER-UNAVAILABLE: ") {
		t.Errorf("outline of the broken server's file = %q (isError %v)", text, isErr)
	}
}
