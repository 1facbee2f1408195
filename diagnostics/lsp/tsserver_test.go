package lsp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTSServerPull: a server offering typescript.tsserverRequest is asked
// for tsserver's three kinds of diagnostics, which come back converted as
// typescript-language-server publishes them (0-based positions, the
// category as the severity, related places as URIs), less the codes its
// settings ignore; its unversioned rounds of publishes are not waited
// for, however long the settle time.
func TestTSServerPull(t *testing.T) {
	f := startFake(t, "-tsserver", "answer", "-versioned=false", "-rounds", "2", "-round-delay", "300ms")
	c := connect(t, f, Options{Settings: []byte(`{"diagnostics": {"ignoredCodes": [7027, "6133"]}}`)})
	ctx := context.Background()
	path := filepath.Join(f.root, "a.ts")
	uri := URIFromPath(path)

	text := "const a = 1; // SYNTAX\nlet 😀 = ERROR;\nWARN\nconst unused = 2;\n"
	if _, err := c.Sync(ctx, uri, "typescript", []byte(text)); err != nil {
		t.Fatal(err)
	}
	set, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: time.Minute, Settle: time.Minute})
	if err != nil || !set.Pulled || !set.Fresh || set.Version != 1 {
		t.Fatalf("Diagnostics = %+v, %v; want a fresh pulled set for version 1", set, err)
	}
	var got []string
	for _, d := range set.Items {
		got = append(got, SeverityName(d.Severity)+" "+string(d.Code)+" "+d.Source+" "+d.Message)
	}
	// WARN's code 7027 is ignored; "6133" is a string, which
	// typescript-language-server does not match against numeric codes.
	want := []string{
		"error 1005 typescript found SYNTAX",
		"error 2322 typescript found ERROR",
		"hint 6133 typescript found unused",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("items:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// ERROR follows "let 😀 = ": 9 UTF-16 units, the emoji being two.
	e := set.Items[1]
	if e.Range != (Range{Start: Position{Line: 1, Character: 9}, End: Position{Line: 1, Character: 14}}) {
		t.Fatalf("ERROR's range = %+v; want line 1, characters 9-14", e.Range)
	}
	if len(e.RelatedInformation) != 1 || e.RelatedInformation[0].Location.URI != string(uri) ||
		e.RelatedInformation[0].Location.Range != (Range{Start: Position{Line: 0, Character: 0}, End: Position{Line: 0, Character: 22}}) ||
		e.RelatedInformation[0].Message != "the document starts here" {
		t.Fatalf("ERROR's related information = %+v", e.RelatedInformation)
	}
	log := waitLog(t, f, "recv workspace/executeCommand")
	if n := strings.Count(log, "recv workspace/executeCommand"); n != 3 {
		t.Fatalf("%d executeCommand requests; want 3 (one per kind)", n)
	}

	// The next version is asked about again: the fix is seen at once.
	c.Sync(ctx, uri, "typescript", []byte("const a = 1;\n"))
	set, err = c.Diagnostics(ctx, uri, WaitOptions{Wait: time.Minute, Settle: time.Minute})
	if err != nil || !set.Pulled || set.Version != 2 || len(set.Items) != 0 {
		t.Fatalf("after the fix = %+v, %v; want an empty pulled set for version 2", set, err)
	}
}

// TestTSServerPullOtherDocuments: PullOthers asks about every open
// document but the ones skipped (the fake publishes nothing), and
// Published then has their sets.
func TestTSServerPullOtherDocuments(t *testing.T) {
	f := startFake(t, "-tsserver", "answer", "-rounds", "0")
	c := connect(t, f, Options{})
	ctx := context.Background()
	a, b := URIFromPath(filepath.Join(f.root, "a.ts")), URIFromPath(filepath.Join(f.root, "b.ts"))
	c.Sync(ctx, a, "typescript", []byte("ERROR\n"))
	c.Sync(ctx, b, "typescript", []byte("x ERROR\n"))
	before := c.Seq()
	c.PullOthers(ctx, map[DocumentURI]bool{a: true})
	var pulled []DocumentURI
	for _, p := range c.Published() {
		if p.Seq > before {
			pulled = append(pulled, p.URI)
			if len(p.Items) != 1 || p.Items[0].Range.Start.Character != 2 || p.Version == nil || *p.Version != 1 {
				t.Fatalf("b's set = %+v; want its ERROR at character 2, for version 1", p)
			}
		}
	}
	if len(pulled) != 1 || pulled[0] != b {
		t.Fatalf("PullOthers asked about %v; want only %s", pulled, b)
	}
}

// TestTSServerPullOtherCommand: a server whose typescript.tsserverRequest
// answers something other than tsserver's response is waited for as
// before, and not asked again.
func TestTSServerPullOtherCommand(t *testing.T) {
	f := startFake(t, "-tsserver", "other")
	c := connect(t, f, Options{})
	ctx := context.Background()
	uri := URIFromPath(filepath.Join(f.root, "a.ts"))
	for i, text := range []string{"ERROR\n", "ERROR\nERROR\n"} {
		c.Sync(ctx, uri, "typescript", []byte(text))
		set, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: time.Minute})
		if err != nil || set.Pulled || !set.Fresh || len(set.Items) != i+1 {
			t.Fatalf("Diagnostics of %q = %+v, %v; want the %d published item(s)", text, set, err, i+1)
		}
	}
	log, _ := os.ReadFile(f.log)
	if n := strings.Count(string(log), "recv workspace/executeCommand"); n == 0 || n > 3 {
		t.Fatalf("%d executeCommand requests; want those of the first call only (at most 3)", n)
	}
}

// TestPulledSetOutlivesALatePublish: a set pulled for the document's
// current version is not replaced by a publish that came later but says
// less: one without a version (typescript-language-server's own pass,
// begun before the change, publishes so) or one for an older version.
func TestPulledSetOutlivesALatePublish(t *testing.T) {
	for _, tc := range []struct{ name, pull, late string }{
		{"tsserver/unversioned", "-tsserver=answer", "unversioned"},
		{"tsserver/older", "-tsserver=answer", "older"},
		{"pull/unversioned", "-pull", "unversioned"},
		{"pull/older", "-pull", "older"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, tc.pull, "-rounds", "0", "-late-publish", tc.late)
			c := connect(t, f, Options{})
			ctx := context.Background()
			uri := URIFromPath(filepath.Join(f.root, "use.ts"))
			c.Sync(ctx, uri, "typescript", []byte("const a = 1;\n"))
			c.Sync(ctx, uri, "typescript", []byte("x ERROR\n"))
			set, err := c.Diagnostics(ctx, uri, WaitOptions{Wait: time.Minute})
			if err != nil || !set.Pulled || set.Version != 2 || len(set.Items) != 1 {
				t.Fatalf("Diagnostics = %+v, %v; want one pulled item for version 2", set, err)
			}
			waitLog(t, f, "late publish")
			// The fake answers in order: once this answer is read, the
			// late publish written before it has been handled.
			if _, err := c.DocumentSymbols(ctx, uri); err != nil {
				t.Fatal(err)
			}
			var got []Published
			for _, p := range c.Published() {
				if p.URI == uri {
					got = append(got, p)
				}
			}
			if len(got) != 1 || len(got[0].Items) != 1 || got[0].Version == nil || *got[0].Version != 2 {
				t.Fatalf("after the late %s publish, the sets = %+v; want the pulled item for version 2", tc.late, got)
			}
		})
	}
}
