package diagnostics

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckCapsAndCounts(t *testing.T) {
	p, root := fakePool(t, Options{Wait: 10 * time.Second})
	file := write(t, filepath.Join(root, "dir", "a.txt"), strings.Repeat("ERROR\nWARN\n", 25))
	out, meta := p.Check(context.Background(), file)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "LSP errors detected in this file, please fix:" || lines[1] != "dir/a.txt: L1: found ERROR" || lines[2] != "dir/a.txt: L3: found ERROR" {
		t.Fatalf("output starts %q", lines[:3])
	}
	if len(lines) != 1+maxPerFile+1 || lines[len(lines)-1] != "... and 5 more" {
		t.Fatalf("output has %d lines, ending %q; want 20 errors then \"... and 5 more\"", len(lines), lines[len(lines)-1])
	}
	var res CheckResult
	if err := json.Unmarshal(meta, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || len(res.Files[0].Items) != 50 {
		t.Fatalf("metadata has %d files; want every item of every severity (50)", len(res.Files))
	}
}

func TestCheckIsSilentWithoutAServer(t *testing.T) {
	p, root := fakePool(t, Options{})
	out, meta := p.Check(context.Background(), filepath.Join(root, "x.unknown"))
	if out != "" {
		t.Fatalf("output = %q; want nothing for the model", out)
	}
	if !strings.Contains(string(meta), "no server is configured for .unknown files") {
		t.Fatalf("metadata = %s; want the reason kept", meta)
	}
}

func TestFormatErrorsOtherFiles(t *testing.T) {
	var others []Report
	for i := range 7 {
		path := fmt.Sprintf("/w/f%d.go", i)
		others = append(others, Report{Path: path, Items: []Diagnostic{
			{Path: path, Line: 3, Severity: "error", Message: "undefined:\n\tFoo"},
			{Path: path, Line: 4, Severity: "warning", Message: "unused"},
		}})
	}
	out := FormatErrors("/w", nil, others)
	want := "LSP errors detected in other files, please fix:\n" +
		"f0.go: L3: undefined: Foo\nf1.go: L3: undefined: Foo\nf2.go: L3: undefined: Foo\nf3.go: L3: undefined: Foo\nf4.go: L3: undefined: Foo\n" +
		"... and errors in 2 more files\n"
	if out != want {
		t.Fatalf("FormatErrors =\n%s\nwant\n%s", out, want)
	}
	if FormatErrors("/w", []Report{{Items: []Diagnostic{{Severity: "warning"}}}}, nil) != "" {
		t.Fatal("warnings alone produced output")
	}
}
