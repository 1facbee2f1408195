package tool

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/internal/htmlmd"
)

//go:embed webfetch.md
var webfetchDescription string

// webfetchPermission is the permission a fetch asks, with the URL as its
// subject.
const webfetchPermission = permission.WebFetch

// The webfetch tool's caps.
const (
	webfetchMaxBody      = 5 << 20 // bytes read from a response
	webfetchMaxOutput    = 256 << 10
	webfetchDefaultWait  = 30 * time.Second
	webfetchMaxWait      = 120 * time.Second
	webfetchMaxRedirects = 5
)

// WebFetchOptions decide which addresses the webfetch tool may reach. The
// zero value refuses loopback, private (RFC 1918, ULA, CGNAT), link-local,
// unspecified and multicast addresses, so a page the model was told to
// fetch cannot make darman probe the user's own services.
type WebFetchOptions struct {
	// AllowPrivate lets webfetch reach every address.
	AllowPrivate bool
	// Allow names what webfetch may reach even though it is private: a host
	// name ("intranet.example", any case), a host and port
	// ("localhost:8080", "127.0.0.1:8080", "[::1]:8080"), an address or a
	// CIDR range ("10.0.0.0/8"). Entries that parse as none of these are
	// ignored (the config loader reports them).
	Allow []string
	// Resolver looks host names up; nil means net.DefaultResolver.
	Resolver *net.Resolver
}

type webfetchInput struct {
	URL     string `json:"url" jsonschema:"the http or https URL to fetch"`
	Format  string `json:"format,omitempty" jsonschema:"markdown (default: HTML is converted to Markdown) or html (the page as it is)"`
	Timeout int    `json:"timeout,omitempty" jsonschema:"seconds to wait for the whole response (default 30, at most 120)"`
}

// webfetch fetches URLs for the model under an address policy.
type webfetch struct {
	policy addrPolicy
	client *http.Client
}

// newWebFetch returns the webfetch tool.
func newWebFetch(opts WebFetchOptions) Tool {
	w := &webfetch{policy: newAddrPolicy(opts)}
	w.client = &http.Client{
		Transport: &http.Transport{
			// No proxy: a proxy would resolve and connect itself, out of
			// reach of the address checks.
			Proxy:                  nil,
			DialContext:            w.policy.dial,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    10 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
			IdleConnTimeout:        30 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !sameHost(req.URL, via[0].URL) {
				return http.ErrUseLastResponse
			}
			if len(via) > webfetchMaxRedirects {
				return fmt.Errorf("stopped after %d redirects", webfetchMaxRedirects)
			}
			return nil
		},
	}
	return newTyped(Info{
		Name:        "webfetch",
		Description: webfetchDescription,
		Kind:        agent.ToolKindFetch,
		ReadOnly:    true,
		Timeout:     webfetchMaxWait + 10*time.Second,
	}, func(s *jsonschema.Schema) {
		setEnum(s, []string{"markdown", "html"}, "format")
		setMinimum(s, 0, "timeout")
	}, w.run)
}

func (w *webfetch) run(ctx context.Context, env *Env, in webfetchInput) (Result, error) {
	u, err := url.Parse(strings.TrimSpace(in.URL))
	switch {
	case err != nil:
		return failure("invalid URL", "%q is not a URL (%v). Give an absolute http or https URL, e.g. https://example.com/page.", in.URL, err), nil
	case u.Scheme != "http" && u.Scheme != "https":
		return failure("unsupported scheme", "webfetch fetches only http and https URLs, not %q. Use read for workspace files.", u.Scheme+":"), nil
	case u.Hostname() == "":
		return failure("invalid URL", "%q has no host. Give an absolute URL, e.g. https://example.com/page.", in.URL), nil
	}
	u.Fragment = ""
	if u.Path == "" {
		u.Path = "/" // so that an "always" answer's origin/* pattern covers it
	}
	shown := u.String()
	host := u.Hostname()
	// An address the policy refuses whatever the answer is refused before
	// the question, not after the user said yes. Only what needs no look-up:
	// a DNS query for a name the model chose would already carry data out.
	if refused := w.policy.refusesLiteral(host, u.Port(), u.Scheme); refused != nil {
		return w.fetchFailure(ctx, ctx, shown, 0, refused)
	}
	if denied, ok, err := permit(ctx, env, permission.Call{
		Permission: webfetchPermission,
		Subjects:   []string{shown},
		Title:      "Fetch from " + host,
		Metadata:   map[string]any{"url": shown, "host": host},
	}); !ok {
		return denied, err
	}

	wait := webfetchDefaultWait
	if in.Timeout > 0 {
		wait = min(time.Duration(in.Timeout)*time.Second, webfetchMaxWait)
	}
	fetchCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	req, err := http.NewRequestWithContext(fetchCtx, http.MethodGet, shown, nil)
	if err != nil {
		return failure("invalid URL", "Cannot fetch %s: %v", shown, err), nil
	}
	req.Header.Set("User-Agent", "darman-webfetch/1")
	if in.Format == "html" {
		req.Header.Set("Accept", "text/html, */*;q=0.8")
	} else {
		req.Header.Set("Accept", "text/markdown, text/html;q=0.9, text/plain;q=0.8, application/json;q=0.8, */*;q=0.5")
	}

	resp, err := w.client.Do(req)
	if err != nil {
		return w.fetchFailure(ctx, fetchCtx, shown, wait, err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL.String()

	if isRedirect(resp.StatusCode) {
		loc, err := resp.Location()
		if err != nil {
			return failure("bad redirect", "%s answered %s without a usable Location (%v).", final, resp.Status, err), nil
		}
		return Result{
			Output: fmt.Sprintf("%s redirects (%s) to %s, on another host (%s). The redirect was not followed: call webfetch with that URL to fetch it.",
				final, resp.Status, loc, loc.Hostname()),
			Title:    "redirect to " + loc.Hostname(),
			Metadata: metadata(map[string]any{"url": shown, "status": resp.StatusCode, "location": loc.String()}),
		}, nil
	}

	body, err := io.ReadAll(io.LimitReader(resp.Body, webfetchMaxBody+1))
	if err != nil {
		return w.fetchFailure(ctx, fetchCtx, final, wait, err)
	}
	cut := len(body) > webfetchMaxBody
	if cut {
		body = body[:webfetchMaxBody]
	}
	mediaType, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	meta := map[string]any{"url": shown, "finalURL": final, "status": resp.StatusCode, "contentType": mediaType, "bytes": len(body), "bodyCut": cut}
	title := shorten(host+u.EscapedPath(), 80)

	if resp.StatusCode >= 400 {
		text, _ := decodeText(body)
		return Result{
			Output:   fmt.Sprintf("%s answered %s.\n\n%s", final, resp.Status, cutBefore(text, 4<<10)),
			IsError:  true,
			Title:    resp.Status,
			Metadata: metadata(meta),
		}, nil
	}

	if img := imageMIME(body); img != "" {
		if cut {
			return failure("image too large", "%s is an image of more than %d MiB; images that large cannot be attached.", final, webfetchMaxBody>>20), nil
		}
		return Result{
			Output:      fmt.Sprintf("%s is a %s image (%d bytes); it is attached.", final, img, len(body)),
			Title:       title,
			Attachments: []agent.File{{Name: imageName(resp.Request.URL), MIME: img, Data: body}},
			Metadata:    metadata(meta),
		}, nil
	}

	if mediaType == "" || isTextType(mediaType) || mediaType == "application/xhtml+xml" {
		body = toUTF8(body, resp.Header.Get("Content-Type"))
	}
	var text string
	switch {
	case in.Format != "html" && (mediaType == "text/html" || mediaType == "application/xhtml+xml" || mediaType == "" && looksHTML(body)):
		md, err := htmlmd.Convert(fetchCtx, string(body), resp.Request.URL)
		if err != nil {
			return failure("unreadable HTML", "Cannot turn the HTML of %s into Markdown (%v); fetch it again with format \"html\".", final, err), nil
		}
		text = md
	case isTextType(mediaType) || mediaType == "" && !isBinary("", body):
		text, _ = decodeText(body)
	default:
		return failure("binary content", "%s is %s (%d bytes), which webfetch cannot show: it returns HTML as Markdown, text, JSON and images (PNG, JPEG, GIF, WebP).", final, mediaType, len(body)), nil
	}
	if cs := params["charset"]; cs != "" {
		meta["charset"] = strings.ToLower(cs)
	}

	var notes []string
	if final != shown {
		notes = append(notes, "Redirected to "+final+".")
	}
	if cut {
		notes = append(notes, fmt.Sprintf("The response was larger than %d MiB; only its first %d MiB were read.", webfetchMaxBody>>20, webfetchMaxBody>>20))
	}
	if len(text) > webfetchMaxOutput {
		full := text
		text = cutBefore(full, webfetchMaxOutput)
		path, err := saveOutput(env, "webfetch", []byte(full))
		if err != nil {
			return Result{}, err
		}
		meta["savedTo"] = path
		notes = append(notes, fmt.Sprintf("Output cut at %d of %d bytes; the whole of it is saved in %s: read it with offset and limit, or grep it.", len(text), len(full), path))
	}
	if len(notes) > 0 {
		text = strings.TrimRight(text, "\n") + "\n\n[" + strings.Join(notes, " ") + "]"
	}
	return Result{Output: text, Title: title, Metadata: metadata(meta)}, nil
}

// fetchFailure turns a failed request into the call's result: a refused
// address, a timeout, an unreachable host. Only the caller's own context
// ending is an error of the environment.
func (w *webfetch) fetchFailure(ctx, fetchCtx context.Context, shown string, wait time.Duration, err error) (Result, error) {
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	var refused *refusedAddrError
	switch {
	case errors.As(err, &refused):
		return failure("address refused", "webfetch refused %s: %v. Fetching loopback, private and link-local addresses is off, so that a page cannot make darman reach the user's own machine or network; the user can allow such addresses with webfetch.allowPrivate or webfetch.allow in darman's config.", shown, refused), nil
	case fetchCtx.Err() != nil:
		return failure("timed out", "Fetching %s took longer than %s and was stopped. Try again with a larger timeout (at most %d seconds), or a smaller page.", shown, wait, int(webfetchMaxWait/time.Second)), nil
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return failure("host not found", "Cannot fetch %s: the host %s was not found (%v).", shown, dns.Name, dns.Err), nil
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return failure("fetch failed", "Cannot fetch %s: %v", shown, err), nil
}

// toUTF8 decodes a body declared (by a byte-order mark or the
// Content-Type's charset) as UTF-16, Latin-1 or Windows-1252, the legacy
// encodings still common on the web. Anything else is taken as UTF-8:
// guessing from the first bytes would garble pages whose first non-ASCII
// character comes late, and the full set of legacy tables would add most of
// a megabyte to darman.
func toUTF8(body []byte, contentType string) []byte {
	var e encoding.Encoding
	_, params, _ := mime.ParseMediaType(contentType)
	switch {
	case bytes.HasPrefix(body, []byte{0xff, 0xfe}), bytes.HasPrefix(body, []byte{0xfe, 0xff}):
		e = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM)
	case bytes.HasPrefix(body, []byte(utf8BOM)):
		return body
	default:
		switch strings.ToLower(strings.TrimSpace(params["charset"])) {
		case "iso-8859-1", "latin1", "l1", "iso_8859-1", "windows-1252", "cp1252", "x-cp1252":
			e = charmap.Windows1252 // as browsers do for ISO-8859-1
		case "iso-8859-15", "latin-9":
			e = charmap.ISO8859_15
		case "utf-16", "utf-16le":
			e = unicode.UTF16(unicode.LittleEndian, unicode.UseBOM)
		case "utf-16be":
			e = unicode.UTF16(unicode.BigEndian, unicode.UseBOM)
		default:
			return body
		}
	}
	b, err := e.NewDecoder().Bytes(body)
	if err != nil {
		return body
	}
	return b
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// sameHost reports whether a redirect stays on the host first asked for:
// the same host name and port, or the upgrade from http to https.
func sameHost(to, from *url.URL) bool {
	if !strings.EqualFold(to.Hostname(), from.Hostname()) {
		return false
	}
	if effectivePort(to) == effectivePort(from) {
		return true
	}
	// http://host/ to https://host/: the usual upgrade.
	return from.Scheme == "http" && to.Scheme == "https" && from.Port() == "" && to.Port() == ""
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func isTextType(t string) bool {
	switch {
	case strings.HasPrefix(t, "text/"),
		t == "application/json", strings.HasSuffix(t, "+json"),
		t == "application/xml", strings.HasSuffix(t, "+xml"),
		t == "application/javascript", t == "application/x-javascript", t == "application/ecmascript",
		t == "application/x-yaml", t == "application/yaml", t == "application/toml",
		t == "application/x-sh", t == "application/sql", t == "application/graphql":
		return true
	}
	return false
}

func looksHTML(b []byte) bool {
	return http.DetectContentType(b) == "text/html; charset=utf-8"
}

func imageName(u *url.URL) string {
	if i := strings.LastIndexByte(u.Path, '/'); i >= 0 && i < len(u.Path)-1 {
		return u.Path[i+1:]
	}
	return u.Hostname()
}

// addrPolicy decides which addresses webfetch may connect to.
type addrPolicy struct {
	allowAll  bool
	hosts     map[string]bool // host names and host:port, lower case
	prefixes  []netip.Prefix
	addrPorts map[netip.AddrPort]bool
	resolver  *net.Resolver
	dialer    net.Dialer
}

func newAddrPolicy(opts WebFetchOptions) addrPolicy {
	p := addrPolicy{allowAll: opts.AllowPrivate, hosts: map[string]bool{}, addrPorts: map[netip.AddrPort]bool{}, resolver: opts.Resolver}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	for _, e := range opts.Allow {
		e = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(e)), ".")
		if pr, err := netip.ParsePrefix(e); err == nil {
			p.prefixes = append(p.prefixes, pr.Masked())
		} else if a, err := netip.ParseAddr(e); err == nil {
			p.prefixes = append(p.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		} else if ap, err := netip.ParseAddrPort(e); err == nil {
			p.addrPorts[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] = true
		} else if e != "" && !strings.ContainsAny(e, "/ ") {
			p.hosts[e] = true
		}
	}
	p.dialer = net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return p
}

// refusedAddrError is a connection the policy refused, before it was made.
type refusedAddrError struct {
	host string
	ip   netip.Addr
	kind string
}

func (e *refusedAddrError) Error() string {
	if e.host == e.ip.String() {
		return fmt.Sprintf("%s is a %s address", e.ip, e.kind)
	}
	return fmt.Sprintf("%s resolves to %s, a %s address", e.host, e.ip, e.kind)
}

// allowed reports whether host (as the URL names it) may be reached at
// ip:port.
func (p *addrPolicy) allowed(host string, ip netip.Addr, port uint16) (kind string, ok bool) {
	ip = ip.Unmap()
	kind = blockedKind(ip)
	if kind == "" || p.allowAll {
		return kind, true
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if p.hosts[host] || p.hosts[net.JoinHostPort(host, strconv.Itoa(int(port)))] || p.addrPorts[netip.AddrPortFrom(ip, port)] {
		return kind, true
	}
	for _, pr := range p.prefixes {
		if pr.Contains(ip) {
			return kind, true
		}
	}
	return kind, false
}

// refusesLiteral is the refusal of a host that needs no look-up — an
// address, or localhost and its subdomains, which are loopback (RFC 6761)
// — when the policy refuses it; nil otherwise.
func (p *addrPolicy) refusesLiteral(host, port, scheme string) *refusedAddrError {
	n := uint16(80)
	if scheme == "https" {
		n = 443
	}
	if v, err := strconv.ParseUint(port, 10, 16); err == nil {
		n = uint16(v)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		h := strings.TrimSuffix(strings.ToLower(host), ".")
		if h != "localhost" && !strings.HasSuffix(h, ".localhost") {
			return nil
		}
		ip = netip.IPv6Loopback()
	}
	if kind, ok := p.allowed(host, ip, n); !ok {
		return &refusedAddrError{host: host, ip: ip.Unmap(), kind: kind}
	}
	return nil
}

// dial resolves addr's host, refuses it when any of its addresses is one
// the policy refuses, and connects to an allowed address; the dialer checks
// the address again as it connects, so a resolver answering differently
// the second time (DNS rebinding) cannot lead anywhere else.
func (p *addrPolicy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", addr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = p.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	for _, ip := range ips {
		if kind, ok := p.allowed(host, ip, uint16(port)); !ok {
			return nil, &refusedAddrError{host: host, ip: ip.Unmap(), kind: kind}
		}
	}
	d := p.dialer
	d.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("connect to %q: not an address", address)
		}
		if kind, ok := p.allowed(host, ap.Addr(), ap.Port()); !ok {
			return &refusedAddrError{host: host, ip: ap.Addr().Unmap(), kind: kind}
		}
		return nil
	}
	var firstErr error
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("%s has no address", host)
	}
	return nil, firstErr
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// blockedKind names the kind of address ip is when webfetch refuses it by
// default, "" for a public address.
func blockedKind(ip netip.Addr) string {
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified(), thisNetwork.Contains(ip):
		return "unspecified"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast(), ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "multicast or broadcast"
	case ip.IsPrivate():
		return "private"
	case cgnat.Contains(ip):
		return "shared (CGNAT)"
	case !ip.IsValid():
		return "invalid"
	}
	return ""
}
