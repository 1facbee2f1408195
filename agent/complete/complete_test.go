package complete

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
)

// engine is an engine whose model is the scripted server's
// /v1/completions, through the real FIM client.
func engine(t testing.TB, script llmtest.Script, o Options) (*Engine, *llmtest.Server) {
	t.Helper()
	srv := llmtest.Start(t, script)
	c, err := provider.New(provider.Settings{Name: "local", Type: llm.TypeOpenAICompatible, BaseURL: srv.OpenAIURL()},
		&provider.Options{Retry: llm.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	o.Model = &FIMModel{Client: c, API: llm.FIMCompletions, Model: "coder"}
	if o.Debounce == 0 {
		o.Debounce = -1
	}
	if o.Root == "" {
		o.Root = "/ws"
	}
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e, srv
}

func TestTidy(t *testing.T) {
	for _, tc := range []struct {
		s, rest, suffix string
		single          bool
		want            string
	}{
		{"a, b)", ")", ")\n", true, "a, b"},
		{"a, b);", ");", ");\n", true, "a, b"},
		{"x + 1  ", "", "\n", true, "x + 1"},
		{"name", "name)", "name)\n", true, "name"}, // the whole rest: nothing left but what is there? keep
		{"if x {\n\t\treturn 1\n\t}\n\treturn 0\n}", "", "\n}\n", false, "if x {\n\t\treturn 1\n\t}\n\treturn 0"},
		{"foo()\n}\nfunc other() {}", "", "\n}\n\nfunc next() {}\n", false, "foo()"},
	} {
		if got := tidy(tc.s, tc.rest, tc.suffix, tc.single); got != tc.want && !(tc.s == "name" && got == "") {
			t.Errorf("tidy(%q, rest %q) = %q, want %q", tc.s, tc.rest, got, tc.want)
		}
	}
}

func TestExclude(t *testing.T) {
	x := newExcluder(append(append([]string(nil), DefaultExclude...), "build/", "/top.txt", "docs/**/*.secret.md", "!keep.key"))
	for path, want := range map[string]bool{
		".env": true, "sub/.env": true, ".env.local": true, "prod.env": true, "certs/server.pem": true,
		"a/b/id_rsa": true, "id_ed25519.pub": true, ".ssh/config": true, "config/secrets/db.yaml": true,
		"build/out.go": true, "pkg/build/x.go": true, "top.txt": true, "sub/top.txt": false,
		"docs/a/b/x.secret.md": true, "keep.key": false, "main.go": false, "envelope.go": false, "secretsauce.go": false,
	} {
		if got := x.match(path); got != want {
			t.Errorf("match(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestWindowsCutAtLines(t *testing.T) {
	text := "line one\nline two\nline three\nCURSOR line four\nline five\n"
	off := strings.Index(text, "CURSOR")
	if got := text[prefixWindow(text, off, 15):off]; got != "line three\n" {
		t.Errorf("prefix window %q", got)
	}
	if got := text[off:suffixWindow(text, off, 28)]; got != "CURSOR line four\nline five\n" {
		t.Errorf("suffix window %q", got)
	}
	if got := text[off:suffixWindow(text, off, 20)]; got != "CURSOR line four\n" {
		t.Errorf("suffix window %q", got)
	}
	// One long line: cut inside it, on a rune boundary.
	long := strings.Repeat("é", 100)
	if s := prefixWindow(long, len(long), 11); !strings.HasPrefix(long[s:], "é") {
		t.Errorf("cut inside a rune: %q", long[s:])
	}
}

func TestInCommentOrString(t *testing.T) {
	for _, tc := range []struct {
		line, lang string
		want       bool
	}{
		{"\tx := 1 // note ", "go", true},
		{"\ts := \"abc", "go", true},
		{"\ts := \"abc\" + ", "go", false},
		{"    # a comment", "python", true},
		{"    x = 'it", "python", true},
		{"-- select", "sql", true},
		{"\turl := \"http://x\" + ", "go", false},
	} {
		if got := inCommentOrString(tc.line, tc.lang); got != tc.want {
			t.Errorf("inCommentOrString(%q, %s) = %v", tc.line, tc.lang, got)
		}
	}
}

// TestChangedCancelsTheModelRequest: a didChange while the model is asked
// closes its connection and the request answers nothing.
func TestChangedCancelsTheModelRequest(t *testing.T) {
	e, srv := engine(t, llmtest.Script{Steps: []llmtest.Step{{Text: "x", Faults: []llmtest.Fault{{Kind: llmtest.FaultStall, Times: -1}}}}}, Options{})
	done := make(chan Result, 1)
	go func() {
		r, _ := e.Complete(context.Background(), Request{URI: "file:///ws/a.go", Path: "/ws/a.go", Language: "go", Text: "x := ", Offset: 5})
		done <- r
	}()
	var call *llmtest.Call
	for deadline := time.Now().Add(10 * time.Second); call == nil; {
		if calls := srv.ModelCalls(); len(calls) > 0 {
			call = calls[0]
		} else if time.Now().After(deadline) {
			t.Fatal("no model call")
		}
		time.Sleep(time.Millisecond)
	}
	e.Changed("file:///ws/a.go")
	select {
	case <-call.ClientGone():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection stayed open after the change")
	}
	if r := <-done; r.Text != "" || r.Reason != ReasonChanged {
		t.Errorf("result %+v", r)
	}
	if st := e.Stats(); st.Superseded != 1 || st.ModelCalls != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestDebounceSupersededAsksNothing: requests that a newer one replaces
// during their debounce never reach the model.
func TestDebounceSupersededAsksNothing(t *testing.T) {
	e, srv := engine(t, llmtest.Script{Steps: []llmtest.Step{{Text: "done"}}}, Options{Debounce: 50 * time.Millisecond})
	results := make(chan Result, 3)
	for i := range 3 {
		text := "x := " + strings.Repeat("a", i)
		go func() {
			r, _ := e.Complete(context.Background(), Request{URI: "u", Path: "/ws/a.go", Language: "go", Text: text, Offset: len(text)})
			results <- r
		}()
		time.Sleep(5 * time.Millisecond)
	}
	got := map[string]int{}
	for range 3 {
		r := <-results
		got[r.Text+"|"+r.Reason]++
	}
	if got["done|"] != 1 || got["|"+ReasonSuperseded] != 2 {
		t.Errorf("results %v", got)
	}
	if n := len(srv.ModelCalls()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
}

// TestSkipsAndLanguages: a cursor in a comment asks nothing when
// configured (unless invoked); a language switched off asks nothing.
func TestSkipsAndLanguages(t *testing.T) {
	e, srv := engine(t, llmtest.Script{Steps: []llmtest.Step{{Text: "more"}}}, Options{SkipCommentsStrings: true,
		Languages: map[string]bool{"markdown": false}})
	text := "// say "
	r, _ := e.Complete(context.Background(), Request{URI: "a", Path: "/ws/a.go", Language: "go", Text: text, Offset: len(text)})
	if r.Reason != ReasonComment {
		t.Errorf("in a comment: %+v", r)
	}
	r, _ = e.Complete(context.Background(), Request{URI: "b", Path: "/ws/b.md", Language: "markdown", Text: "# x", Offset: 3})
	if r.Reason != ReasonLanguage {
		t.Errorf("markdown: %+v", r)
	}
	if n := len(srv.ModelCalls()); n != 0 {
		t.Errorf("%d model calls", n)
	}
	r, _ = e.Complete(context.Background(), Request{URI: "a", Path: "/ws/a.go", Language: "go", Text: text, Offset: len(text), Invoked: true})
	if r.Text != "more" {
		t.Errorf("invoked in a comment: %+v", r)
	}
}

// TestSingleLineStopsReading: in the middle of a line the suggestion ends
// at its first newline and the stream is closed there.
func TestSingleLineStopsReading(t *testing.T) {
	e, srv := engine(t, llmtest.Script{Steps: []llmtest.Step{{TextChunks: []string{"a + b", "\n", "more lines", "\n", "and more"},
		Delay: llmtest.Duration(20 * time.Millisecond)}}}, Options{})
	text := "return ) + 1\n"
	r, err := e.Complete(context.Background(), Request{URI: "a", Path: "/ws/a.go", Language: "go", Text: text, Offset: 7})
	if err != nil || r.Text != "a + b" {
		t.Fatalf("result %+v %v", r, err)
	}
	select {
	case <-srv.ModelCalls()[0].ClientGone():
	case <-time.After(5 * time.Second):
		t.Error("the stream was read past the line's end")
	}
}

// TestSnippetsPickTheMostSimilarBuffer: of the open buffers, the window
// sharing the cursor's identifiers is sent; an unrelated one is not.
func TestSnippetsPickTheMostSimilarBuffer(t *testing.T) {
	bufs := []Buffer{
		{URI: "b", Path: "/ws/b.go", Version: 1, Text: "package b\n\nfunc parseConfig(path string) (Config, error) {\n\tdata, err := os.ReadFile(path)\n\treturn decodeConfig(data)\n}\n"},
		{URI: "c", Path: "/ws/c.go", Version: 1, Text: "package c\n\nfunc drawCircle(radius float64) {\n\tcanvas.Arc(radius)\n}\n"},
		{URI: "d", Path: "/ws/.env", Version: 1, Text: "parseConfig path data err ReadFile decodeConfig\n"},
	}
	e, _ := engine(t, llmtest.Script{}, Options{Buffers: func() []Buffer { return bufs }})
	text := "package a\n\nfunc load(path string) {\n\tdata, err := os.ReadFile(path)\n\tcfg, err := decodeConfig("
	files := e.snippets(Request{URI: "a", Path: "/ws/a.go", Text: text, Offset: len(text)}, text)
	if len(files) != 1 || files[0].Path != "b.go" || !strings.Contains(files[0].Text, "parseConfig") {
		t.Errorf("snippets %+v", files)
	}
}

// TestRecentlyEditedClosedBufferStaysASource: a buffer edited and then
// closed still gives snippets; one closed unedited does not.
func TestRecentlyEditedClosedBufferStaysASource(t *testing.T) {
	e, _ := engine(t, llmtest.Script{}, Options{Buffers: func() []Buffer { return nil }})
	edited := Buffer{URI: "b", Path: "/ws/b.go", Version: 3, Text: "package b\n\nfunc parseConfig(path string) (Config, error) {\n\tdata, err := os.ReadFile(path)\n\treturn decodeConfig(data)\n}\n"}
	untouched := Buffer{URI: "c", Path: "/ws/c.go", Version: 1, Text: strings.ReplaceAll(edited.Text, "parseConfig", "loadConfig")}
	e.Changed("b")
	e.Closed("b", edited)
	e.Closed("c", untouched)
	text := "package a\n\nfunc load(path string) {\n\tdata, err := os.ReadFile(path)\n\tcfg, err := decodeConfig("
	files := e.snippets(Request{URI: "a", Path: "/ws/a.go", Text: text, Offset: len(text)}, text)
	if len(files) != 1 || files[0].Path != "b.go" {
		t.Errorf("snippets %+v, want the edited, closed b.go alone", files)
	}
}
