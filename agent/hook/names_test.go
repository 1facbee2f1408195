package hook_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/hook"
)

// The table of tool names in docs/configuration.md is the one hooks
// match with: every row of ToolNames, in order, and no other.
func TestToolNamesAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "**Tool names.**")
	if !ok {
		t.Fatal("docs/configuration.md has no **Tool names.** table")
	}
	var documented [][]string
	for _, line := range strings.Split(table, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "| `") {
			if len(documented) > 0 {
				break
			}
			continue
		}
		var row []string
		for _, cell := range strings.Split(strings.Trim(line, "|"), "|") {
			for _, name := range strings.Split(cell, ",") {
				if name = strings.Trim(strings.TrimSpace(name), "`"); name != "" {
					row = append(row, name)
				}
			}
		}
		documented = append(documented, row)
	}
	if want := hook.ToolNames(); !slices.EqualFunc(documented, want, slices.Equal[[]string]) {
		t.Errorf("docs/configuration.md's table:\n%v\nthe names hooks match:\n%v", documented, want)
	}
}
