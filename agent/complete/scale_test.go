package complete

import (
	"fmt"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestSnippetsFromManyBuffers: with more open buffers than a request
// scores, the ones kept are the recently edited and those in the cursor's
// directory, wherever they sort among thousands: the similar code in the
// cursor's package and in a file just edited elsewhere is found; the same
// code in an untouched file far away is not looked at.
func TestSnippetsFromManyBuffers(t *testing.T) {
	similar := "func parseConfig(path string) (Config, error) {\n\tdata, err := os.ReadFile(path)\n\treturn decodeConfig(data)\n}\n"
	var bufs []Buffer
	for i := range 3 * maxScored {
		bufs = append(bufs, Buffer{URI: fmt.Sprintf("a%04d", i), Path: fmt.Sprintf("/ws/other%d/x.go", i), Version: 1,
			Text: fmt.Sprintf("package other\n\nfunc drawCircle%d(radius float64) {\n\tcanvas.Arc(radius)\n}\n", i)})
	}
	bufs = append(bufs,
		Buffer{URI: "zz-near", Path: "/ws/app/config/near.go", Version: 1, Text: "package config\n\n" + similar},
		Buffer{URI: "zz-edited", Path: "/ws/far/away/edited.go", Version: 1, Text: "package away\n\n" + strings.ReplaceAll(similar, "parseConfig", "readConfig")},
		Buffer{URI: "zzz-far", Path: "/ws/vendor/lib/far.go", Version: 1, Text: "package lib\n\n" + strings.ReplaceAll(similar, "parseConfig", "loadConfig")},
	)
	e, _ := engine(t, llmtest.Script{}, Options{Buffers: func() []Buffer { return bufs }})
	e.Changed("zz-edited")
	text := "package config\n\nfunc load(path string) {\n\tdata, err := os.ReadFile(path)\n\tcfg, err := decodeConfig("
	files := e.snippets(Request{URI: "cursor", Path: "/ws/app/config/load.go", Text: text, Offset: len(text)}, text)
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	if !strings.Contains(strings.Join(got, " "), "near.go") || !strings.Contains(strings.Join(got, " "), "edited.go") || strings.Contains(strings.Join(got, " "), "far.go") {
		t.Errorf("snippets from %v; want near.go and edited.go, not far.go", got)
	}
}
