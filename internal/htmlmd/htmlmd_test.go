package htmlmd_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/htmlmd"
)

var update = flag.Bool("update", false, "rewrite testdata/*.md from the converter's output")

var pageURL, _ = url.Parse("https://example.com/docs/guide/page?x=1")

func convert(t testing.TB, page string) string {
	t.Helper()
	md, err := htmlmd.Convert(context.Background(), page, pageURL)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	return md
}

// TestConvert covers the tricky cases one by one: what a tolerant parser
// must survive and what the Markdown must say.
func TestConvert(t *testing.T) {
	for _, tc := range []struct{ name, html, want string }{
		// Tokenizer.
		{"attributes quoted, unquoted, with entities",
			`<a href=/a?b=1&amp;c=2 title='it&#39;s'>x</a> <a HREF="/q?x=&lt;1&gt;">y</a>`,
			`[x](https://example.com/a?b=1&c=2 "it's") [y](https://example.com/q?x=%3C1%3E)`},
		{"comments, doctype, processing instructions",
			`<!DOCTYPE html><?xml version="1.0"?><p>a<!-- <p>not</p> -->b<!---->c<!-->d</p>`,
			"abcd"},
		{"unterminated comment drops the rest", `<p>a</p><!-- <p>b</p>`, "a"},
		{"cdata is text", `<p><![CDATA[x < y]]></p>`, `x < y`},
		{"upper case names", `<P CLASS=x><B>bold</B><BR>next</P>`, "**bold**  \nnext"},
		{"self-closing", `<p>a<br/>b<img src="i.png" alt="i"/><span/>c</p>`, "a  \nb![i](https://example.com/docs/guide/i.png)c"},
		{"unclosed paragraphs and items", `<p>one<p>two<ul><li>a<li>b</ul>`, "one\n\ntwo\n\n- a\n- b"},
		{"misnested inline", `<p><b>bold <i>both</b> italic</i> plain</p>`, "**bold *both*** italic plain"},
		{"stray end tags", `</div></span><p>x</b></p></p>`, "x"},
		{"end br is a br", `a</br>b`, "a  \nb"},
		{"raw text is never markup", `<script>document.write("<p>no</p>")</script><style>p{}</style><p>yes</p><title><b>t</b></title>`, "yes"},
		{"script end tag needs a boundary", `<script>a="</scripts>"; b=1</script >x`, "x"},
		{"unclosed script eats the rest", `<p>a</p><script>var s = "<p>b</p>"`, "a"},
		{"textarea is verbatim", "<textarea>\n<b>x</b> &amp; y</textarea>", "```\n<b>x</b> & y\n```"},
		{"plaintext runs to the end", `<p>a</p><plaintext><b>b</b></plaintext>`, "a\n\n```\n<b>b</b></plaintext>\n```"},
		{"bogus markup is text", `a < b and c <= d, 1<2, </ >, <3 and </3`, `a < b and c <= d, 1<2, , <3 and`},
		{"eof inside a tag", `<p>a</p><a href="x`, "a"},
		{"nul bytes", "<p>a\x00b</p>", "ab"},

		// Dropped.
		{"head, scripts, styles, templates, svg, iframes",
			`<html><head><title>T</title><meta charset=utf-8><style>x</style></head><body><noscript>enable js</noscript><template><p>t</p></template><svg><text>s</text></svg><iframe src=x>f</iframe><p>kept</p></body></html>`,
			"kept"},
		{"head left open", `<head><title>T</title><p>body text</p>`, "body text"},
		{"text ends the head", `<head><meta charset=utf-8>Hello <b>there</b>`, "Hello **there**"},
		{"form controls", `<form><label>Name <input name=n></label><select><option>one</select><button>Send</button></form>`, "Name"},
		{"checkboxes kept", `<ul><li><input type=checkbox checked> done<li><input type=checkbox> todo</ul>`, "- [x] done\n- [ ] todo"},
		{"hidden checkbox", `<p><input type=checkbox checked hidden>x</p>`, "x"},
		{"hidden content", `<p>a<span hidden>b</span><span aria-hidden="true">c</span><span style="display: none">d</span><span style="visibility:hidden">e</span>f</p>`, "af"},
		{"aria-hidden image with alt kept", `<p>x <img aria-hidden="true" alt="n^2" src="f.svg"> <img aria-hidden=true src=icon.png alt=""></p>`, "x ![n^2](https://example.com/docs/guide/f.svg)"},

		// Blocks.
		{"headings", `<h1>One</h1><h2> Two  <small>more</small></h2><h6>Six</h6><h3></h3>`, "# One\n\n## Two more\n\n###### Six"},
		{"heading with a line break and a closing hash", `<h2>C<br>#</h2><h3>1. Intro</h3>`, "## C \\#\n\n### 1. Intro"},
		{"whitespace collapsed", "<p>  a \n\t b&nbsp;&nbsp;c  </p>\n\n<div> d </div>", "a b c\n\nd"},
		{"inline and block siblings", `text <div>block</div> tail`, "text\n\nblock\n\ntail"},
		{"br runs", `<p>a<br>b<br><br>c<br></p><p><br>d</p>`, "a  \nb\n\nc\n\nd"},
		{"hr", `<p>a</p><hr><p>b</p>`, "a\n\n---\n\nb"},
		{"no blank line runs", `<div><p>a</p><p></p><div>  </div><p>&nbsp;</p><p>b</p></div>`, "a\n\nb"},

		// Links and images.
		{"links resolved", `<a href="x">rel</a> <a href="../y">up</a> <a href="//cdn.example/z">proto</a> <a href="#s">frag</a> <a href="mailto:a@b.c">mail</a>`,
			"[rel](https://example.com/docs/guide/x) [up](https://example.com/docs/y) [proto](https://cdn.example/z) [frag](https://example.com/docs/guide/page?x=1#s) [mail](mailto:a@b.c)"},
		{"script links are text, empty links go", `<a href="javascript:void(0)">js</a> <a href=" JavaScript:x">js2</a> <a href="/a"></a><a href="/b"> </a><a name=n>anchor</a>`, "js js2 anchor"},
		{"script links in disguise are text", `<a href="java&#13;script:x">cr</a> <a href="&#1;javascript:x">c0</a> <a href="java&#9;script:x">tab</a>`, "cr c0 tab"},
		{"relative links under a script base are text", `<head><base href="javascript:alert(1)//"></head><a href="x">rel</a>`, "rel"},
		{"link text trimmed", `see<a href="/a"> the docs </a>now`, "see [the docs](https://example.com/a) now"},
		{"image in a link", `<a href="/big.png"><img src="small.png" alt="a [b]"></a>`, `[![a \[b\]](https://example.com/docs/guide/small.png)](https://example.com/big.png)`},
		{"data images give their alt", `<img src="data:image/png;base64,AAAA" alt="logo"><img src="data:image/gif;base64,R0">`, "logo"},
		{"lazy images", `<img data-src="/lazy.png" alt="l"> <img srcset="/a.png 1x, /b.png 2x" alt="s">`, "![l](https://example.com/lazy.png) ![s](https://example.com/a.png)"},
		{"destinations escaped", `<a href="/a b(c">x</a> <a href="/wiki/Go_(lang)">y</a>`, "[x](https://example.com/a%20b%28c) [y](https://example.com/wiki/Go_(lang))"},
		{"base href", `<head><base href="https://other.example/root/"></head><a href="x">x</a>`, "[x](https://other.example/root/x)"},
		{"decorating links within the page dropped", `<a href="#main">Skip to content</a><h2 id=s><a href="#s">Syntax</a> <a href="#s" title="Go to">¶</a></h2><p>Example <a href="#ex">§</a>, see <a href="#s">Syntax</a>.</p>`,
			"## Syntax\n\nExample, see [Syntax](https://example.com/docs/guide/page?x=1#s)."},
		{"nested links", `<a href="/a">one <a href="/b">two</a></a>`, "[one](https://example.com/a) [two](https://example.com/b)"},
		{"link around blocks", `<a href="/card"><h3>Title</h3><p>Summary</p></a>`, "### [Title](https://example.com/card)\n\n[Summary](https://example.com/card)"},

		// Inline.
		{"emphasis", `<p><strong>s</strong> <em>e</em> <b><b>bb</b></b> <i> sp </i>x <del>d</del> <s>s</s></p>`, "**s** *e* **bb** *sp* x ~~d~~ ~~s~~"},
		{"emphasis inside words", `un<b>believ</b>able`, "un**believ**able"},
		{"empty emphasis", `a<b> </b>b<i></i>c`, "a bc"},
		{"code", "<p><code>x</code> <code>a`b</code> <code>``</code> <code> sp </code> <kbd>Ctrl</kbd></p>", "`x` ``a`b`` ``` `` ``` `sp` `Ctrl`"},
		{"code text is not escaped", `<code>*p_q* [x](y) &lt;T&gt;</code>`, "`*p_q* [x](y) <T>`"},

		// Code blocks.
		{"pre verbatim", "<pre>\n  line 1\n\n\tline &lt;2&gt;\n</pre>", "```\n  line 1\n\n\tline <2>\n```"},
		{"pre with tags inside", `<pre><code class="language-go"><span class="k">func</span> main() {<br>}</code></pre>`, "```go\nfunc main() {\n}\n```"},
		{"pre fence longer than backticks", "<pre>a ``` b ```` c</pre>", "`````\na ``` b ```` c\n`````"},
		{"pre language spellings", `<pre class="lang-rust">r</pre><div class="highlight highlight-source-shell"><pre>s</pre></div><pre class="brush: js notranslate">j</pre>`,
			"```rust\nr\n```\n\n```shell\ns\n```\n\n```js\nj\n```"},
		{"pre drops buttons", `<pre><button>Copy</button>x := 1</pre>`, "```\nx := 1\n```"},

		// Lists.
		{"nested lists", `<ul><li>a<ul><li>b<ol><li>c</li></ol></li></ul></li><li>d</li></ul>`, "- a\n  - b\n    1. c\n- d"},
		{"ordered start and value", `<ol start="9"><li>nine<li>ten<li value=20>twenty</ol>`, "9. nine\n10. ten\n20. twenty"},
		{"items with paragraphs and code", `<ol><li><p>First</p><pre>code</pre></li><li><p>Second</p></li></ol>`, "1. First\n\n   ```\n   code\n   ```\n\n2. Second"},
		{"list straight in a list", `<ul><li>a</li><ul><li>b</li></ul></ul>`, "- a\n  - b"},
		{"adjacent lists stay apart", `<ul><li>a</ul><ul><li>b</ul><ol><li>c</ol><ol><li>d</ol>`, "- a\n\n* b\n\n1. c\n\n1) d"},
		{"table in an item", `<ul><li>T:<table><tr><th>a</th><th>b</th></tr></table></li></ul>`, "- T:\n\n  | a | b |\n  | --- | --- |"},
		{"empty items skipped", `<ul><li></li><li> </li><li>x</li></ul>`, "- x"},

		// Quotes.
		{"blockquotes nested", `<blockquote><p>a</p><blockquote><p>b</p><p>c</p></blockquote></blockquote>`, "> a\n>\n> > b\n> >\n> > c"},
		{"quote holding a list", `<blockquote><ul><li>x</li></ul></blockquote>`, "> - x"},

		// Tables.
		{"table with th", `<table><thead><tr><th>A</th><th align=right>B</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>`,
			"| A | B |\n| --- | ---: |\n| 1 | 2 |"},
		{"table without th", `<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>`, "| a | b |\n| --- | --- |\n| c | d |"},
		{"cells escaped and flattened", `<table><tr><th>x|y</th><th>z</th></tr><tr><td>line<br>two</td><td><p>p1</p><p>p2</p></td></tr><tr><td><ul><li>i</li><li>j</li></ul></td><td><code>a|b</code></td></tr></table>`,
			"| x\\|y | z |\n| --- | --- |\n| line two | p1 p2 |\n| i; j | `a\\|b` |"},
		{"colspan and ragged rows", `<table><tr><th colspan=2>wide</th><th>c</th></tr><tr><td>1</td></tr></table>`, "| wide | | c |\n| --- | --- | --- |\n| 1 | | |"},
		{"thead after tbody, tfoot last", `<table><tfoot><tr><td>f</td><td>f</td></tr></tfoot><tbody><tr><td>b</td><td>b</td></tr></tbody><thead><tr><th>h</th><th>h</th></tr></thead></table>`,
			"| h | h |\n| --- | --- |\n| b | b |\n| f | f |"},
		{"caption", `<table><caption>Releases</caption><tr><th>v</th><th>d</th></tr></table>`, "Releases\n\n| v | d |\n| --- | --- |"},
		{"layout table", `<table><tr><td><h2>Menu</h2></td><td><p>Body</p><pre>x</pre></td></tr></table>`, "## Menu\n\nBody\n\n```\nx\n```"},
		{"one column table", `<table><tr><td>a</td></tr><tr><td>b</td></tr></table>`, "a\n\nb"},
		{"presentation table", `<table role=presentation><tr><td>a</td><td>b</td></tr></table>`, "a\n\nb"},
		{"empty table", `<table><tr><td></td><td> </td></tr></table>`, ""},
		{"content outside cells comes first", `<table><tr><td>a</td><td>b</td>stray</tr>loose<p>para</p></table>`, "strayloose\n\npara\n\n| a | b |\n| --- | --- |"},
		{"rows without tr", `<table><td>a<td>b</table>`, "| a | b |\n| --- | --- |"},

		// Definition lists, figures.
		{"definition list", `<dl><dt>Go</dt><dd>A language.</dd><dd>Fast.</dd><dt>Rust</dt><dt>rs</dt><dd><p>Another.</p><p>Safe.</p></dd></dl>`,
			"**Go**\n: A language.\n: Fast.\n\n**Rust**\n**rs**\n: Another.\n\n  Safe."},
		{"figure", `<figure><img src="/f.png" alt="F"><figcaption>Figure 1: the <em>flow</em></figcaption></figure>`, "![F](https://example.com/f.png)\n\nFigure 1: the *flow*"},

		// Escapes.
		{"line starts escaped", `<p># a</p><p>- b</p><p>+ c</p><p>* d</p><p>1. e</p><p>2) f</p><p>&gt; g</p><p>---</p><p>===</p><p>` + "```" + `</p><p>[ref]: /x</p>`,
			"\\# a\n\n\\- b\n\n\\+ c\n\n\\* d\n\n1\\. e\n\n2\\) f\n\n\\> g\n\n\\---\n\n\\===\n\n\\`\\`\\`\n\n\\[ref]: /x"},
		{"line starts after a break", `<p>a<br># b<br>1. c</p>`, "a  \n\\# b  \n1\\. c"},
		{"no litter", `<p>snake_case, 2 * 3, C++, a-b, #1, 3.14, (x), [1], ver. 1.2, e-mail, 100%, a_b, x=y, ~home, path\to</p>`,
			`snake_case, 2 * 3, C++, a-b, #1, 3.14, (x), [1], ver. 1.2, e-mail, 100%, a_b, x=y, ~home, path\to`},
		{"escapes where meaning would change", `<p>*not em* _nor_ <code>ok</code> ` + "`tick`" + ` [a](b) &lt;div&gt; &amp;amp; ~~no~~ \*</p>`,
			"\\*not em\\* \\_nor\\_ `ok` \\`tick\\` [a\\](b) \\<div> \\&amp; \\~\\~no\\~\\~ \\\\\\*"},
		{"a lone star or underscore needs no backslash", `<p>func (b *Builder) Grow, _private</p><p>**kwargs and *args</p><p><b>x</b> *y</p><p>a*b_c</p>`,
			"func (b *Builder) Grow, _private\n\n\\*\\*kwargs and \\*args\n\n**x** \\*y\n\na*b_c"},
		{"brackets in link text", `<a href="/n">[1]</a> <a href="/m">a]b</a> <a href="/o"><span>[</span>2<span>]</span></a> <a href="/p">]x[</a>`,
			"[[1]](https://example.com/n) [a\\]b](https://example.com/m) [[2]](https://example.com/o) [\\]x\\[](https://example.com/p)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := convert(t, tc.html); got != tc.want {
				t.Errorf("Convert(%q)\n got: %q\nwant: %q", tc.html, got, tc.want)
			}
		})
	}
}

func TestRelativeWithoutBase(t *testing.T) {
	md, err := htmlmd.Convert(context.Background(), `<a href="/x">x</a> <img src="i.png" alt="i">`, nil)
	if err != nil || md != "[x](/x) ![i](i.png)" {
		t.Errorf("got %q, %v; want the links left relative", md, err)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	page := strings.Repeat("<p>a <b>b</b></p>", 10000)
	if _, err := htmlmd.Convert(ctx, page, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Convert with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestDeepNesting checks that a page nesting elements far deeper than any
// real one converts, keeping its text.
func TestDeepNesting(t *testing.T) {
	for _, tag := range []string{"div", "blockquote", "ul", "b", "table"} {
		page := strings.Repeat("<"+tag+">", 100000) + "deep" + strings.Repeat("</"+tag+">", 100000)
		if md := convert(t, page); !strings.Contains(md, "deep") {
			t.Errorf("%d nested %s: the text is lost: %.200q", 100000, tag, md)
		}
	}
}

// TestPages converts the pages in testdata, small copies of the kinds of
// page a coding agent fetches (a Go package's documentation, a README on
// GitHub, a reference article, an encyclopedia article with tables), and
// compares the result with the .md beside each. Run with -update to
// rewrite them, then read the diff.
func TestPages(t *testing.T) {
	pages, err := filepath.Glob("testdata/*.html")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in testdata: %v", err)
	}
	for _, p := range pages {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got := convert(t, string(src)) + "\n"
			golden := strings.TrimSuffix(p, ".html") + ".md"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s:\n%s", p, golden, got)
			}
			if strings.Contains(got, "\n\n\n") && !strings.Contains(got, "```") {
				t.Errorf("%s has a run of blank lines", p)
			}
		})
	}
}

func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		`<p>a<b>b<i>c</b>d</i></p>`,
		`<ul><li>x<ol start=3><li><pre>y</pre></ol></ul>`,
		`<table><tr><th>a|b<td><p>c<blockquote>d</table>`,
		`<script>x</scr` + `<style>`,
		`<a href="../x" title="t">[1]</a><img src=//x alt="[">`,
		`<!--x--><![CDATA[y]]><!doctype x><?p?></ >&amp;&#0;&#x110000;`,
		"<pre>```\n<code class=language-go>`</code></pre><textarea>",
		`<dl><dt>t<dd>d<div><dt>u</div></dl><h1>#</h1><hr>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, page string) {
		md, err := htmlmd.Convert(context.Background(), page, pageURL)
		if err != nil {
			t.Fatalf("Convert: %v", err)
		}
		if md != strings.TrimSpace(md) {
			t.Errorf("output not trimmed: %q", md)
		}
		if strings.Contains(md, "\n\n\n") && !strings.Contains(md, "```") {
			t.Errorf("a run of blank lines: %q", md)
		}
	})
}

// BenchmarkConvert converts a page of about 1 MB made of the testdata
// pages.
func BenchmarkConvert(b *testing.B) {
	var parts []string
	pages, _ := filepath.Glob("testdata/*.html")
	for _, p := range pages {
		src, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		parts = append(parts, string(src))
	}
	one := strings.Join(parts, "\n")
	page := strings.Repeat(one, (1<<20)/len(one)+1)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := htmlmd.Convert(context.Background(), page, pageURL); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleConvert() {
	base, _ := url.Parse("https://example.com/docs/")
	md, _ := htmlmd.Convert(context.Background(), `<h2>Install</h2>
<p>Run <code>go install</code>, then read <a href="usage">the usage</a>.</p>
<pre class="language-sh">darman version</pre>`, base)
	fmt.Println(md)
	// Output:
	// ## Install
	//
	// Run `go install`, then read [the usage](https://example.com/docs/usage).
	//
	// ```sh
	// darman version
	// ```
}
