package prompt

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"
)

// TestSectionsMatchTextTemplate renders system.md for every subset of the
// tools it names (and one it does not) and compares with what text/template
// gives for the same source, which is what darman used before.
func TestSectionsMatchTextTemplate(t *testing.T) {
	var names []string
	for _, m := range regexp.MustCompile(`has "([a-z_]+)"`).FindAllStringSubmatch(systemMD, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	if len(names) < 5 {
		t.Fatalf("system.md names %d tools (%v): the pattern no longer finds them", len(names), names)
	}
	names = append(names, "webfetch")
	sections, err := parseSections("system.md", systemMD)
	if err != nil {
		t.Fatal(err)
	}
	for mask := 0; mask < 1<<len(names); mask++ {
		var tools []string
		for i, n := range names {
			if mask&(1<<i) != 0 {
				tools = append(tools, n)
			}
		}
		tmpl := template.Must(template.New("system.md").Funcs(template.FuncMap{
			"has": func(name string) bool { return slices.Contains(tools, name) },
		}).Parse(systemMD))
		var want, got strings.Builder
		if err := tmpl.Execute(&want, nil); err != nil {
			t.Fatal(err)
		}
		render(&got, sections, tools)
		if got.String() != want.String() {
			t.Fatalf("tools %v: got\n%s\nwant\n%s", tools, got.String(), want.String())
		}
	}
}

func TestSectionsSyntax(t *testing.T) {
	for _, tc := range []struct{ src, tools, want string }{
		{"a {{if has \"x\"}}X{{else if has \"y\"}}Y{{else}}Z{{end}} b", "x", "a X b"},
		{"a {{if has \"x\"}}X{{else if has \"y\"}}Y{{else}}Z{{end}} b", "y", "a Y b"},
		{"a {{if has \"x\"}}X{{else if has \"y\"}}Y{{else}}Z{{end}} b", "", "a Z b"},
		{"a \n {{- if or (has \"x\") (has \"y\") -}} \n Q \n{{- end}}", "y", "aQ"},
		{"{{if has \"x\"}}{{if has \"y\"}}XY{{end}}X{{end}}", "x y", "XYX"},
	} {
		sections, err := parseSections("t", tc.src)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		var sb strings.Builder
		render(&sb, sections, strings.Fields(tc.tools))
		if sb.String() != tc.want {
			t.Errorf("%q with %q: got %q, want %q", tc.src, tc.tools, sb.String(), tc.want)
		}
	}
	for _, src := range []string{
		"{{if has \"x\"}}unclosed",
		"{{end}}",
		"{{else}}",
		"{{if has \"x\"}}a{{else}}b{{else}}c{{end}}",
		"{{if has x}}a{{end}}",
		"{{if or (has \"x\")}}a{{end}}",
		"{{.Field}}",
		"{{if has \"x\"",
		"{{range .}}{{end}}",
	} {
		if _, err := parseSections("t", src); err == nil {
			t.Errorf("%q: parsed, want an error", src)
		} else if !strings.HasPrefix(err.Error(), "t") {
			t.Errorf("%q: error %q does not name the file", src, err)
		}
	}
}
