package tool_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/darman-dev/darman/agent/tool"
)

// site is a local HTTP server that records the paths it was asked for.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
	stop chan struct{}
}

func newSite(t *testing.T, network, addr string, mux *http.ServeMux) *site {
	t.Helper()
	s := &site{stop: make(chan struct{})}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("cannot listen on %s %s: %v", network, addr, err)
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.URL.Path)
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	s.Server.Listener.Close()
	s.Server.Listener = l
	s.Start()
	t.Cleanup(func() {
		close(s.stop)
		s.Close()
	})
	return s
}

func (s *site) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// hostPort is the listener's address, as an allow entry names it.
func (s *site) hostPort() string { return strings.TrimPrefix(s.URL, "http://") }

const page = `<!doctype html><html><head><title>T</title><script>stealCookies()</script><style>body{}</style></head>
<body><h1>Hello</h1><p>Some <b>bold</b> text and <a href="/docs/x">a link</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`

// guidePage is served at /guide/start, reached by a redirect from /moved:
// its relative links must resolve against where it was found.
const guidePage = `<!DOCTYPE html><html><head><title>Guide</title></head><body>
<nav aria-hidden="true"><a href="/">Home</a></nav>
<h2>Getting started</h2>
<p>Read <a href="intro" title="The intro">the intro</a>, the <a href="../api#Run">API</a>, a <a href="//mirror.example/start">mirror</a>
and <a href="#install">below</a>. <a href="javascript:alert(1)">Not a link</a>.</p>
<p><img src="img/flow.png" alt="The flow"></p>
<pre><code class="language-go">fmt.Println(&quot;a &lt; b&quot;)</code></pre>
<table><tr><th>Flag</th><th>Meaning</th></tr><tr><td><code>-v</code></td><td>verbose | chatty</td></tr></table>
</body></html>`

func pngImage(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testMux(t *testing.T, stop func() <-chan struct{}, other func() string) *http.ServeMux {
	img := pngImage(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/guide/start", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/guide/start", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, guidePage)
	})
	mux.HandleFunc("/huge.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>")
		para := "<p>A paragraph of <b>text</b> with <a href=\"x\">a link</a>.</p>\n"
		for range 6 << 20 / len(para) {
			fmt.Fprint(w, para)
		}
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name": "darman", "tags": [1, 2]}`)
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusFound)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other()+"/target", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop():
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		line := strings.Repeat("x", 99) + "\n"
		for range 6 << 20 / len(line) {
			fmt.Fprint(w, line)
		}
	})
	mux.HandleFunc("/pic.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(img)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Write([]byte("<p>caf\xe9 cr\xe8me</p>"))
	})
	mux.HandleFunc("/utf16.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte{0xff, 0xfe, 'h', 0, 0xe9, 0, 'l', 0, 'l', 0, 'o', 0})
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	return mux
}

// TestWebFetch fetches from a local server that the address rule allows
// by its address and port, and only that.
func TestWebFetch(t *testing.T) {
	var s, other *site
	s = newSite(t, "tcp", "127.0.0.1:0", testMux(t, func() <-chan struct{} { return s.stop }, func() string { return other.URL }))
	other = newSite(t, "tcp", "127.0.0.1:0", http.NewServeMux())
	h := newHarness(t, tool.Options{WebFetch: tool.WebFetchOptions{Allow: []string{s.hostPort()}}})

	t.Run("html as markdown", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/page"})
		for _, want := range []string{"# Hello", "**bold**", "[a link](" + s.URL + "/docs/x)", "- one\n- two"} {
			if !strings.Contains(res.Output, want) {
				t.Errorf("output lacks %q:\n%s", want, res.Output)
			}
		}
		if strings.Contains(res.Output, "stealCookies") || strings.Contains(res.Output, "<h1>") {
			t.Errorf("output keeps scripts or tags:\n%s", res.Output)
		}
		calls := h.permissions()
		last := calls[len(calls)-1]
		if last.Permission != "webfetch" || len(last.Subjects) != 1 || last.Subjects[0] != s.URL+"/page" || !strings.Contains(last.Title, "127.0.0.1") {
			t.Errorf("permission asked: %+v, want webfetch for the URL with the host in the title", last)
		}
	})
	t.Run("html links resolved against the final URL", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/moved"})
		for _, want := range []string{
			"## Getting started",
			"[the intro](" + s.URL + `/guide/intro "The intro")`,
			"[API](" + s.URL + "/api#Run)",
			"[mirror](http://mirror.example/start)",
			"[below](" + s.URL + "/guide/start#install)",
			"Not a link.",
			"![The flow](" + s.URL + "/guide/img/flow.png)",
			"```go\nfmt.Println(\"a < b\")\n```",
			"| Flag | Meaning |\n| --- | --- |\n| `-v` | verbose \\| chatty |",
			"Redirected to " + s.URL + "/guide/start.",
		} {
			if !strings.Contains(res.Output, want) {
				t.Errorf("output lacks %q:\n%s", want, res.Output)
			}
		}
		if strings.Contains(res.Output, "Home") || strings.Contains(res.Output, "javascript:") {
			t.Errorf("output keeps hidden navigation or a script link:\n%s", res.Output)
		}
	})
	t.Run("oversized html cut and converted", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/huge.html"})
		if !strings.HasPrefix(res.Output, "| A | B |\n| --- | --- |\n| 1 | 2 |\n\nA paragraph") || !strings.Contains(res.Output, "A paragraph of **text** with [a link]("+s.URL+"/x).") {
			t.Errorf("output does not start with the page as Markdown:\n%s", res.Output[:min(len(res.Output), 400)])
		}
		if !strings.Contains(res.Output, "larger than 5 MiB") || !strings.Contains(res.Output, "saved in ") {
			t.Errorf("output does not say it was cut:\n%s", res.Output[len(res.Output)-400:])
		}
	})
	t.Run("html as is", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/page", "format": "html"})
		if res.Output != page {
			t.Errorf("output %q, want the page as it is", res.Output)
		}
	})
	t.Run("json as is", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/data.json"})
		if res.Output != `{"name": "darman", "tags": [1, 2]}` {
			t.Errorf("output %q, want the JSON as served", res.Output)
		}
	})
	t.Run("same-host redirect followed", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/old"})
		if !strings.Contains(res.Output, "# Hello") || !strings.Contains(res.Output, "Redirected to "+s.URL+"/page") {
			t.Errorf("output:\n%s", res.Output)
		}
	})
	t.Run("cross-host redirect reported", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/away"})
		if !strings.Contains(res.Output, other.URL+"/target") || !strings.Contains(res.Output, "not followed") {
			t.Errorf("output:\n%s", res.Output)
		}
		if got := other.requests(); len(got) != 0 {
			t.Errorf("the other host was asked for %v", got)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		h.fails("webfetch", map[string]any{"url": s.URL + "/slow", "timeout": 1}, "took longer than 1s")
	})
	t.Run("oversized body cut", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/big"})
		if len(res.Output) > 300<<10 {
			t.Errorf("output is %d bytes, want it capped", len(res.Output))
		}
		if !strings.Contains(res.Output, "larger than 5 MiB") || !strings.Contains(res.Output, "saved in ") {
			t.Errorf("output does not say it was cut:\n%s", res.Output[len(res.Output)-400:])
		}
		i := strings.Index(res.Output, "saved in ")
		path := strings.Fields(res.Output[i+len("saved in "):])[0]
		path = strings.TrimSuffix(path, ":")
		saved, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(saved) != 5<<20 {
			t.Errorf("saved %d bytes, want the 5 MiB read", len(saved))
		}
	})
	t.Run("image attached", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/pic.png"})
		if len(res.Attachments) != 1 || res.Attachments[0].MIME != "image/png" || !bytes.Equal(res.Attachments[0].Data, pngImage(t)) {
			t.Fatalf("attachments %+v, want the PNG", res.Attachments)
		}
	})
	t.Run("declared charset decoded", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/latin1"})
		if res.Output != "café crème" {
			t.Errorf("output %q, want the Latin-1 page as UTF-8", res.Output)
		}
	})
	t.Run("utf-16 with a byte-order mark decoded", func(t *testing.T) {
		res := h.ok("webfetch", map[string]any{"url": s.URL + "/utf16.txt"})
		if res.Output != "héllo" {
			t.Errorf("output %q, want the UTF-16 text as UTF-8", res.Output)
		}
	})
	t.Run("http error", func(t *testing.T) {
		h.fails("webfetch", map[string]any{"url": s.URL + "/missing"}, "404", "no such page")
	})
	t.Run("other schemes refused", func(t *testing.T) {
		before := len(h.permissions())
		for _, u := range []string{"file:///etc/passwd", "ftp://" + s.hostPort() + "/page", "gopher://" + s.hostPort() + "/"} {
			h.fails("webfetch", map[string]any{"url": u}, "only http and https")
		}
		if len(h.permissions()) != before {
			t.Error("a refused scheme still asked for permission")
		}
	})
	t.Run("permission denied", func(t *testing.T) {
		d := newHarness(t, tool.Options{WebFetch: tool.WebFetchOptions{Allow: []string{s.hostPort()}}})
		d.deny("webfetch", "not now")
		n := len(s.requests())
		d.fails("webfetch", map[string]any{"url": s.URL + "/data.json"}, "not now")
		if len(s.requests()) != n {
			t.Error("the server was asked although the permission was refused")
		}
	})
}

// TestWebFetchRefusesLocal checks that with the default rule no local or
// private address is fetched, however it is named, and that the listener
// behind them never sees a request.
func TestWebFetchRefusesLocal(t *testing.T) {
	s4 := newSite(t, "tcp", "127.0.0.1:0", http.NewServeMux())
	_, port, _ := net.SplitHostPort(s4.hostPort())
	var s6 *site
	if l, err := net.Listen("tcp", "[::1]:"+port); err == nil {
		l.Close()
		s6 = newSite(t, "tcp", "[::1]:"+port, http.NewServeMux())
	}
	// The allowed host redirects to the loopback listener.
	var allowed *site
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+port+"/secret", http.StatusFound)
	})
	allowed = newSite(t, "tcp", "127.0.0.1:0", mux)

	h := newHarness(t, tool.Options{WebFetch: tool.WebFetchOptions{Allow: []string{allowed.hostPort()}}})
	for _, u := range []string{
		"http://127.0.0.1:" + port + "/secret",
		"http://[::1]:" + port + "/secret",
		"http://localhost:" + port + "/secret",
		"http://0.0.0.0:" + port + "/secret",
		"http://[::ffff:127.0.0.1]:" + port + "/secret",
		"http://10.1.2.3/",
		"http://192.168.1.1/",
		"http://172.16.0.1/",
		"http://169.254.169.254/latest/meta-data/",
		"http://100.64.0.1/",
		"http://[fd00::1]/",
		"http://[fe80::1]/",
		"http://224.0.0.1/",
	} {
		h.fails("webfetch", map[string]any{"url": u, "timeout": 5}, "webfetch refused", "address", "webfetch.allowPrivate")
	}

	res := h.ok("webfetch", map[string]any{"url": allowed.URL + "/start"})
	if !strings.Contains(res.Output, "not followed") {
		t.Errorf("the redirect to loopback was not reported: %s", res.Output)
	}
	if got := allowed.requests(); len(got) != 1 {
		t.Errorf("the allowed host saw %v, want the one request", got)
	}
	if got := s4.requests(); len(got) != 0 {
		t.Errorf("the loopback listener saw %v", got)
	}
	if s6 != nil {
		if got := s6.requests(); len(got) != 0 {
			t.Errorf("the ::1 listener saw %v", got)
		}
	}
}

// TestWebFetchAllowPrivate switches the rule off as a whole.
func TestWebFetchAllowPrivate(t *testing.T) {
	var s *site
	s = newSite(t, "tcp", "127.0.0.1:0", testMux(t, func() <-chan struct{} { return s.stop }, func() string { return "" }))
	h := newHarness(t, tool.Options{WebFetch: tool.WebFetchOptions{AllowPrivate: true}})
	_, port, _ := net.SplitHostPort(s.hostPort())
	res := h.ok("webfetch", map[string]any{"url": "http://localhost:" + port + "/data.json"})
	if !strings.Contains(res.Output, `"darman"`) {
		t.Errorf("output %q", res.Output)
	}
}

// fakeDNS answers every A query with addrs, over UDP on 127.0.0.1, and is
// the resolver the returned net.Resolver asks.
func fakeDNS(t *testing.T, addrs ...[4]byte) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			if q.Type == dnsmessage.TypeA {
				for _, a := range addrs {
					b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: a})
				}
			}
			msg, err := b.Finish()
			if err == nil {
				pc.WriteTo(msg, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// TestWebFetchRefusesNamesResolvingLocal: a public-looking name whose DNS
// answer holds a loopback or private address is refused before connecting,
// even when another of its addresses is public.
func TestWebFetchRefusesNamesResolvingLocal(t *testing.T) {
	s := newSite(t, "tcp", "127.0.0.1:0", http.NewServeMux())
	_, port, _ := net.SplitHostPort(s.hostPort())
	for _, addrs := range [][][4]byte{{{127, 0, 0, 1}}, {{93, 184, 216, 34}, {10, 0, 0, 1}}} {
		h := newHarness(t, tool.Options{WebFetch: tool.WebFetchOptions{Resolver: fakeDNS(t, addrs...)}})
		h.fails("webfetch", map[string]any{"url": "http://docs.example.com:" + port + "/"}, "docs.example.com resolves to", "webfetch refused")
	}
	if got := s.requests(); len(got) != 0 {
		t.Errorf("the loopback listener saw %v", got)
	}
	// With the name allowed, the same answer reaches the listener.
	h := newHarness(t, tool.Options{WebFetch: tool.WebFetchOptions{Resolver: fakeDNS(t, [4]byte{127, 0, 0, 1}), Allow: []string{"docs.example.com"}}})
	h.fails("webfetch", map[string]any{"url": "http://docs.example.com:" + port + "/"}, "404")
	if got := s.requests(); len(got) != 1 {
		t.Errorf("the listener saw %v, want one request", got)
	}
}
