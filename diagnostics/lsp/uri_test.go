package lsp

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"runtime"
	"testing"
	"time"
)

// The URIs darman sends a language server for a path, and the paths of the
// URIs servers send back, for each OS's forms; goos is a parameter so that
// the Windows forms are checked on every machine.
func TestURIsOfPaths(t *testing.T) {
	for _, tc := range []struct {
		goos, path string
		uri        DocumentURI
	}{
		{"windows", `C:\src\a.go`, "file:///C:/src/a.go"},
		{"windows", `c:\src\a.go`, "file:///C:/src/a.go"},
		{"windows", `C:/src/a.go`, "file:///C:/src/a.go"},
		{"windows", `\\srv\share\src\a.go`, "file://srv/share/src/a.go"},
		{"windows", `\\?\C:\src\a.go`, "file:///C:/src/a.go"},
		{"windows", `\\?\UNC\srv\share\a.go`, "file://srv/share/a.go"},
		{"windows", `C:\My Projects\naïve\é.go`, "file:///C:/My%20Projects/na%C3%AFve/%C3%A9.go"},
		{"windows", `C:\x\100%.go`, "file:///C:/x/100%25.go"},
		{"linux", "/src/a.go", "file:///src/a.go"},
		{"linux", "/My Projects/naïve/é.go", "file:///My%20Projects/na%C3%AFve/%C3%A9.go"},
		{"linux", `/src/C:\x.go`, "file:///src/C:%5Cx.go"},
		{"darwin", "/Users/me/a b.go", "file:///Users/me/a%20b.go"},
	} {
		if got := uriFromPath(tc.goos, tc.path); got != tc.uri {
			t.Errorf("%s: uriFromPath(%q) = %q, want %q", tc.goos, tc.path, got, tc.uri)
		}
	}

	for _, tc := range []struct {
		goos string
		uri  DocumentURI
		path string
	}{
		{"windows", "file:///C:/src/a.go", `C:\src\a.go`},
		{"windows", "file:///c:/src/a.go", `C:\src\a.go`},
		{"windows", "file:///c%3A/src/a.go", `C:\src\a.go`},
		{"windows", "file:///C%3a/src/a.go", `C:\src\a.go`},
		{"windows", "file://localhost/C:/src/a.go", `C:\src\a.go`},
		{"windows", "file://srv/share/src/a.go", `\\srv\share\src\a.go`},
		{"windows", "file:///c%3A/My%20Projects/na%C3%AFve/%C3%A9.go", `C:\My Projects\naïve\é.go`},
		{"linux", "file:///src/a.go", "/src/a.go"},
		{"linux", "file:///My%20Projects/na%C3%AFve/%C3%A9.go", "/My Projects/naïve/é.go"},
		{"linux", "file:///C:/x.go", "/C:/x.go"}, // a Linux path, not a drive
	} {
		got, err := uriPath(tc.goos, tc.uri)
		if err != nil || got != tc.path {
			t.Errorf("%s: uriPath(%q) = %q, %v; want %q", tc.goos, tc.uri, got, err, tc.path)
		}
	}

	for _, tc := range []struct {
		goos string
		uri  DocumentURI
	}{
		{"windows", "untitled:Untitled-1"},
		{"windows", "file:///src/a.go"}, // no drive: no absolute Windows path
		{"windows", "file:///c%3A"},
		{"windows", "%zz"},
		{"linux", "untitled:Untitled-1"},
		{"linux", "%zz"},
	} {
		if got, err := uriPath(tc.goos, tc.uri); err == nil {
			t.Errorf("%s: uriPath(%q) = %q, want an error", tc.goos, tc.uri, got)
		}
	}
}

// However a server spells a file's URI, darman reads it as the URI it
// sends for that file itself; what names no local file stays as sent.
func TestServerURIsMatchDarmans(t *testing.T) {
	for _, tc := range []struct {
		goos   string
		sent   DocumentURI // by the server
		path   string      // the file darman asked about
		keepAs bool        // names no file: kept as sent
	}{
		{goos: "windows", sent: "file:///c%3A/src/a.go", path: `C:\src\a.go`},
		{goos: "windows", sent: "file:///c:/src/a.go", path: `C:\src\a.go`},
		{goos: "windows", sent: "file:///C:/src/a.go", path: `c:\src\a.go`},
		{goos: "windows", sent: "file:///c%3A/node_modules/%40types/n%C3%A4.ts", path: `C:\node_modules\@types\nä.ts`},
		{goos: "windows", sent: "file://SRV/share/a.go", path: `\\SRV\share\a.go`},
		{goos: "windows", sent: "file://srv/share/a%20b.go", path: `\\?\UNC\srv\share\a b.go`},
		{goos: "windows", sent: "file:///C:/src/./x/../a.go", path: `C:\src\a.go`},
		{goos: "linux", sent: "file:///x/node_modules/%40types/a.ts", path: "/x/node_modules/@types/a.ts"},
		{goos: "linux", sent: "file://localhost/x/a.go", path: "/x/a.go"},
		{goos: "linux", sent: "file:///x/a%20b.go", path: "/x/a b.go"},
		{goos: "windows", sent: "untitled:Untitled-1", keepAs: true},
		{goos: "windows", sent: "file:///src/a.go", keepAs: true},
		{goos: "linux", sent: "untitled:Untitled-1", keepAs: true},
		{goos: "linux", sent: "file://srv/share/a.go", keepAs: true},
		{goos: "linux", sent: "file:a.go", keepAs: true},
		{goos: "linux", sent: "%zz", keepAs: true},
	} {
		want := tc.sent
		if !tc.keepAs {
			want = uriFromPath(tc.goos, tc.path)
		}
		if got := canonicalURI(tc.goos, tc.sent); got != want {
			t.Errorf("%s: the server's %q read as %q, want %q", tc.goos, tc.sent, got, want)
		}
	}
}

// What a server publishes, and the files of a rename's edits, are keyed
// under the URI darman itself uses for the file.
func TestDecodedURIsAreDarmans(t *testing.T) {
	sent, path := "file:///x/node_modules/%40types/a.ts", "/x/node_modules/@types/a.ts"
	if runtime.GOOS == "windows" {
		sent, path = "file:///c%3A/x/node_modules/%40types/a.ts", `C:\x\node_modules\@types\a.ts`
	}
	want := URIFromPath(path)
	var pub PublishDiagnosticsParams
	if err := json.Unmarshal([]byte(`{"uri":"`+sent+`","diagnostics":[]}`), &pub); err != nil {
		t.Fatal(err)
	}
	if pub.URI != want {
		t.Errorf("publishDiagnostics for %s: %q, want %q", sent, pub.URI, want)
	}
	var edit WorkspaceEdit
	if err := json.Unmarshal([]byte(`{"changes":{"`+sent+`":[]},"documentChanges":[{"textDocument":{"uri":"`+sent+`","version":1},"edits":[]}]}`), &edit); err != nil {
		t.Fatal(err)
	}
	if _, ok := edit.Changes[want]; !ok || len(edit.Changes) != 1 {
		t.Errorf("rename's changes are keyed %v, want %q", edit.Changes, want)
	}
	if len(edit.Edits) != 1 || edit.Edits[0].URI != want {
		t.Errorf("rename's document changes: %+v, want one for %q", edit.Edits, want)
	}
	// glsp's Location holds a plain string: the client respells it.
	var syms []WorkspaceSymbol
	if err := json.Unmarshal([]byte(`[{"name":"a","kind":12,"location":{"uri":"`+sent+`"}}]`), &syms); err != nil {
		t.Fatal(err)
	}
	if len(syms) != 1 || syms[0].Location.URI != string(want) {
		t.Errorf("workspace symbol: %+v, want its location in %q", syms, want)
	}
	c := bareClient()
	handler{c}.notification("textDocument/publishDiagnostics", json.RawMessage(`{"uri":"`+sent+`","diagnostics":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"message":"m","relatedInformation":[{"location":{"uri":"`+sent+`","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}},"message":"here"}]}]}`))
	got := c.Published()
	if len(got) != 1 || got[0].URI != want || len(got[0].Items) != 1 || got[0].Items[0].RelatedInformation[0].Location.URI != string(want) {
		t.Errorf("published: %+v, want the set and its related place under %q", got, want)
	}
}

// bareClient is a Client with no connection, for feeding its handler.
func bareClient() *Client {
	return &Client{
		opts:       Options{MaxItems: 1000, MaxDocuments: 10000},
		log:        slog.New(slog.DiscardHandler),
		docs:       map[DocumentURI]*document{},
		published:  map[DocumentURI]*published{},
		changed:    make(chan struct{}),
		progress:   map[string]time.Time{},
		registered: map[string]string{},
	}
}

// Whatever a server sends, reading it never fails and reading it again
// changes nothing: darman's spelling is a fixed point.
func FuzzCanonicalURI(f *testing.F) {
	for _, s := range []string{"file:///c%3A/x/a.go", "file://srv/share/a%20b", "file:///x/%40types", "untitled:1", "file:x", "%zz", `file:///\\?\C:\x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, goos := range []string{"windows", "linux"} {
			once := canonicalURI(goos, DocumentURI(s))
			if twice := canonicalURI(goos, once); twice != once {
				t.Errorf("%s: %q read as %q, then as %q", goos, s, once, twice)
			}
		}
	})
}

// TestPlainURIsNeedNoParse: a file URI that escapes nothing and needs no
// escape is taken as it is, and is what parsing and respelling it gives;
// any other goes through the parse.
func TestPlainURIsNeedNoParse(t *testing.T) {
	for _, u := range []DocumentURI{
		"file:///usr/local/go/src/time/format.go", "file:///w/node_modules/@types/a.ts", "file:///a/b-c_d.e~f/$&+,;=:g.go",
		"file:///w/a%20b.go", "file:///w/a b.go", "file:///w/é.go", "file:///w/a#b.go", "file:///w/a?b.go", "file:///w/a(b).go",
		"file://host/w/a.go", "file:///", "untitled:///a.go",
	} {
		p, plain := plainFileURI(u)
		parsed, err := url.Parse(string(u))
		if !plain {
			if string(u) == "file:///w/node_modules/@types/a.ts" || string(u) == "file:///usr/local/go/src/time/format.go" {
				t.Errorf("%s is not taken as plain", u)
			}
			continue
		}
		if err != nil || parsed.Path != p || uriFromPath("linux", parsed.Path) != u {
			t.Errorf("%s taken as plain with path %q; parsing gives %q (%v), respelt %q", u, p, parsed.Path, err, uriFromPath("linux", parsed.Path))
		}
	}
}
