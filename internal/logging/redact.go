package logging

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/darman-dev/darman/internal/lazyre"
)

const redacted = "[redacted]"

// MinSecretLen is the shortest value [Redactor.Add] accepts. Shorter
// "secrets" are placeholders such as "none" or "ollama"; masking such a
// word everywhere would garble the logs.
const MinSecretLen = 8

// Redactor masks secrets in log records and strings. The zero value is
// ready to use and knows the built-in patterns; its methods are safe for
// concurrent use, and a secret added later is masked in records logged
// after Add returns, including attributes bound earlier with With.
type Redactor struct {
	mu      sync.Mutex // serializes Add
	secrets atomic.Pointer[secretSet]
}

type secretSet struct {
	values   []string
	replacer *strings.Replacer
}

// Add registers values to mask wherever they appear in a logged string.
// Empty values and values shorter than [MinSecretLen] are ignored.
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var values []string
	if old := r.secrets.Load(); old != nil {
		values = slices.Clone(old.values)
	}
	for _, s := range secrets {
		if len(s) >= MinSecretLen && !slices.Contains(values, s) {
			values = append(values, s)
		}
	}
	// Longest first, so a secret that contains another is masked whole.
	slices.SortFunc(values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(values))
	for _, v := range values {
		pairs = append(pairs, v, redacted)
	}
	r.secrets.Store(&secretSet{values: values, replacer: strings.NewReplacer(pairs...)})
}

var (
	// API keys: Anthropic's sk-ant-…, OpenAI's sk-… and sk-proj-….
	apiKeyPattern = lazyre.New(`\bsk-[A-Za-z0-9_\-]{16,}`)
	// Service tokens by their documented prefixes: GitHub's ghp_, gho_,
	// ghu_, ghs_, ghr_ and github_pat_, GitLab's glpat-, Slack's xoxb-,
	// xoxp- (and xoxa-, xoxo-, xoxr-, xoxs-), AWS access key ids AKIA…
	// and ASIA….
	tokenPattern = lazyre.New(`\b(gh[pousr]_|github_pat_|glpat-|xox[abposr]-)[A-Za-z0-9_\-]{10,}|\b(AKIA|ASIA)[A-Z0-9]{16}\b`)
	// Bearer tokens, as in an Authorization header.
	bearerPattern = lazyre.New(`(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]+=*`)
	// key=value, as in a URL query or an environment dump.
	assignPattern = lazyre.New(`(?i)\b((?:x-)?api[_-]?key|key|access[_-]?token|token|secret|password)=([^\s&"',;]+)`)
	// "key": "value", as in a logged JSON body.
	jsonPattern = lazyre.New(`(?i)"((?:x-)?api[_-]?key|access[_-]?token|token|secret|password|authorization)"(\s*:\s*)"[^"]*"`)
)

// Redact returns s with every secret it recognizes masked: the values
// added with Add, then API keys, bearer tokens, and key=value or JSON
// members whose key names a secret.
func (r *Redactor) Redact(s string) string {
	if r != nil {
		if set := r.secrets.Load(); set != nil {
			s = set.replacer.Replace(s)
		}
	}
	// Each pattern runs only where its cheap precondition holds: most
	// logged strings hold no secret at all.
	if strings.Contains(s, "sk-") {
		s = apiKeyPattern.ReplaceAllStringFunc(s, func(m string) string {
			if strings.HasPrefix(m, "sk-ant-") {
				return "sk-ant-" + redacted
			}
			return "sk-" + redacted
		})
	}
	if hasTokenPrefix(s) {
		s = tokenPattern.ReplaceAllStringFunc(s, func(m string) string {
			for _, p := range tokenPrefixes {
				if strings.HasPrefix(m, p) {
					return p + redacted
				}
			}
			return redacted
		})
	}
	if containsFold(s, "bearer") {
		s = bearerPattern.ReplaceAllString(s, "$1 "+redacted)
	}
	if strings.IndexByte(s, '=') >= 0 {
		s = assignPattern.ReplaceAllString(s, "$1="+redacted)
	}
	if strings.IndexByte(s, '"') >= 0 {
		s = jsonPattern.ReplaceAllString(s, `"$1"$2"`+redacted+`"`)
	}
	return s
}

// tokenPrefixes are what tokenPattern's matches start with; the prefix is
// kept, so a log still says what kind of token was there.
var tokenPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
	"xoxa-", "xoxb-", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "AKIA", "ASIA"}

func hasTokenPrefix(s string) bool {
	return strings.Contains(s, "gh") || strings.Contains(s, "glpat-") || strings.Contains(s, "xox") ||
		strings.Contains(s, "AKIA") || strings.Contains(s, "ASIA")
}

// secretKeySuffixes end the normalized names of attributes whose values are
// secrets. Suffixes, not substrings: "input_tokens" is a count.
var secretKeySuffixes = []string{
	"apikey", "token", "secret", "password", "passwd", "passphrase",
	"authorization", "cookie", "credential", "credentials", "privatekey",
}

// secretKey reports whether an attribute key names a secret: api_key,
// apiKey, X-Api-Key, Authorization, access_token, client_secret, …
func secretKey(key string) bool {
	k := strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(key))
	for _, s := range secretKeySuffixes {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

func (r *Redactor) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	if secretKey(a.Key) {
		if v.Kind() == slog.KindString && v.String() == "" {
			return slog.String(a.Key, "")
		}
		return slog.String(a.Key, redacted)
	}
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		out := make([]slog.Attr, len(group))
		for i, g := range group {
			out[i] = r.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case []byte:
			s = string(x)
		default:
			s = fmt.Sprintf("%+v", x)
		}
		// Only a value that held a secret is turned into its masked text;
		// others keep their type for the handler to format.
		if masked := r.Redact(s); masked != s {
			return slog.String(a.Key, masked)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// Handler returns a handler that masks secrets in each record's message
// and attributes (also inside groups, and those bound with WithAttrs), then
// passes the record to next.
func (r *Redactor) Handler(next slog.Handler) slog.Handler {
	return &handler{next: next, r: r}
}

// handler keeps what WithAttrs and WithGroup bound instead of passing it to
// next at once, so that every record is masked with the secrets known when
// it is logged.
type handler struct {
	next  slog.Handler
	r     *Redactor
	bound []groupOrAttrs
}

type groupOrAttrs struct {
	group string // a WithGroup when not empty
	attrs []slog.Attr
}

func (h *handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return h.with(groupOrAttrs{attrs: slices.Clone(attrs)})
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.with(groupOrAttrs{group: name})
}

func (h *handler) with(g groupOrAttrs) *handler {
	return &handler{next: h.next, r: h.r, bound: append(slices.Clip(h.bound), g)}
}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	attrs := make([]slog.Attr, 0, rec.NumAttrs())
	rec.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	// Rebuild the nesting that WithGroup and WithAttrs described, innermost
	// first. A group with nothing in it is left out, as slog's handlers do.
	for i := len(h.bound) - 1; i >= 0; i-- {
		b := h.bound[i]
		if b.group == "" {
			attrs = append(slices.Clip(b.attrs), attrs...)
		} else if len(attrs) > 0 {
			attrs = []slog.Attr{slog.GroupAttrs(b.group, attrs...)}
		}
	}
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	for _, a := range attrs {
		out.AddAttrs(h.r.attr(a))
	}
	return h.next.Handle(ctx, out)
}

// containsFold reports whether s contains the lower-case ASCII word sub in
// any case, without allocating.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
