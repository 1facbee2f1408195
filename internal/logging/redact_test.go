package logging_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/darman-dev/darman/internal/logging"
)

// newLogger returns a redacting text logger without times, writing to buf.
func newLogger(r *logging.Redactor, buf *bytes.Buffer) *slog.Logger {
	h := slog.NewTextHandler(buf, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})
	return slog.New(r.Handler(h))
}

func TestSecretKeysAreRedacted(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(nil, &buf)
	log.Info("request",
		"api_key", "k1", "apiKey", "k2", "X-Api-Key", "k3", "Authorization", "Basic dXNlcjpwYXNz",
		"token", "k5", "access_token", "k6", "client_secret", "k7", "PASSWORD", 1234,
		"input_tokens", 1200, "max_tokens", 4096, "token_count", 7, "provider", "anthropic",
		"empty_api_key", "",
	)
	want := `level=INFO msg=request api_key=[redacted] apiKey=[redacted] X-Api-Key=[redacted] ` +
		`Authorization=[redacted] token=[redacted] access_token=[redacted] client_secret=[redacted] PASSWORD=[redacted] ` +
		`input_tokens=1200 max_tokens=4096 token_count=7 provider=anthropic empty_api_key=""` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestSecretKeysInGroups(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(nil, &buf)
	log.Info("call",
		slog.Group("request", slog.String("url", "https://api.example/v1"),
			slog.Group("headers", slog.String("Authorization", "secret-value"), slog.String("Accept", "text/event-stream"))),
		slog.Group("credentials", slog.String("user", "u")),
	)
	log.WithGroup("provider").With("apiKey", "bound-secret", "name", "openai").WithGroup("http").Info("retry", "x-api-key", "k", "attempt", 2)
	want := `level=INFO msg=call request.url=https://api.example/v1 request.headers.Authorization=[redacted] request.headers.Accept=text/event-stream credentials=[redacted]` + "\n" +
		`level=INFO msg=retry provider.apiKey=[redacted] provider.name=openai provider.http.x-api-key=[redacted] provider.http.attempt=2` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestKeyLikeStringsAreMasked(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(nil, &buf)
	log.Info("using key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
		"header", "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
		"openai", "sk-proj-AbCdEfGhIjKlMnOpQrSt_uvwx-yz",
		"url", "https://generativelanguage.example/v1?key=abc&token=t0k3n&alt=sse",
		"body", `{"model":"m","api_key": "abc123","x":1}`,
		"err", errors.New("401 from https://api.example: invalid x-api-key=sk-abcdefghijklmnopqrstuvwxyz"),
		"short", "sk-learn",
		"task", "task-abcdefghijklmnopqrstuvwxyz",
	)
	want := `level=INFO msg="using key sk-ant-[redacted]" header="Bearer [redacted]" openai=sk-[redacted] ` +
		`url="https://generativelanguage.example/v1?key=[redacted]&token=[redacted]&alt=sse" ` +
		`body="{\"model\":\"m\",\"api_key\": \"[redacted]\",\"x\":1}" ` +
		`err="401 from https://api.example: invalid x-api-key=[redacted]" short=sk-learn task=task-abcdefghijklmnopqrstuvwxyz` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestServiceTokensAreMasked is finding 10: the tokens of GitHub, GitLab,
// Slack and AWS, by their documented prefixes, in messages and values.
func TestServiceTokensAreMasked(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(nil, &buf)
	log.Info("cloning with ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
		"pat", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
		"oauth", "gho_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
		"gitlab", "remote: glpat-AbCdEf0123456789xyz_",
		"slack", "xoxb-1234567890-0987654321-AbCdEfGhIjKl",
		"user", "xoxp-1234567890-0987654321-AbCdEfGhIjKl",
		"aws", "AWS_ACCESS_KEY_ID is AKIAIOSFODNN7EXAMPLE, session ASIAIOSFODNN7EXAMPLE",
		"ordinary", "ghost_town xoxo AKIA gh_short",
	)
	out := buf.String()
	for _, leak := range []string{"AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "11ABCDEFG0123456789", "AbCdEf0123456789xyz_",
		"1234567890-0987654321", "IOSFODNN7EXAMPLE"} {
		if strings.Contains(out, leak) {
			t.Errorf("%q was logged:\n%s", leak, out)
		}
	}
	for _, kept := range []string{"ghp_[redacted]", "github_pat_[redacted]", "gho_[redacted]", "glpat-[redacted]",
		"xoxb-[redacted]", "xoxp-[redacted]", "AKIA[redacted]", "ASIA[redacted]", `ordinary="ghost_town xoxo AKIA gh_short"`} {
		if !strings.Contains(out, kept) {
			t.Errorf("the log lacks %q:\n%s", kept, out)
		}
	}
}

type request struct {
	URL    string
	Secret string
}

func TestAddedSecretsAreMaskedEverywhere(t *testing.T) {
	var buf bytes.Buffer
	r := new(logging.Redactor)
	log := newLogger(r, &buf)
	bound := log.With("dsn", "postgres://u:corp-db-password@db/x")

	r.Add("corp-db-password", "corp-team-header-value", "tiny", "")
	bound.Info("connect corp-team-header-value",
		"cmd", []string{"psql", "corp-db-password"},
		"req", request{URL: "https://x", Secret: "corp-team-header-value"},
		"err", fmt.Errorf("dial: %w", errors.New("auth failed for corp-db-password")),
		"n", 3,
		"note", "tiny is too short to mask",
	)
	want := `level=INFO msg="connect [redacted]" dsn=postgres://u:[redacted]@db/x cmd="[psql [redacted]]" ` +
		`req="{URL:https://x Secret:[redacted]}" err="dial: auth failed for [redacted]" n=3 note="tiny is too short to mask"` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestLongerSecretMaskedWhole(t *testing.T) {
	r := new(logging.Redactor)
	r.Add("abcdefgh", "abcdefgh-and-more")
	if got := r.Redact("x abcdefgh-and-more y abcdefgh"); got != "x [redacted] y [redacted]" {
		t.Errorf("Redact = %q", got)
	}
	var nilR *logging.Redactor
	if got := nilR.Redact("Bearer abc"); got != "Bearer [redacted]" {
		t.Errorf("nil Redactor: Redact = %q", got)
	}
}

func TestRedactingJSONHandler(t *testing.T) {
	var buf bytes.Buffer
	r := new(logging.Redactor)
	r.Add("super-secret-key")
	h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	slog.New(r.Handler(h)).WithGroup("g").Info("m", "apiKey", "super-secret-key", "echo", "super-secret-key!", "n", 1)
	want := `{"level":"INFO","msg":"m","g":{"apiKey":"[redacted]","echo":"[redacted]!","n":1}}` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestEmptyGroupsAreLeftOut(t *testing.T) {
	var buf bytes.Buffer
	newLogger(nil, &buf).WithGroup("g").Info("nothing in the group")
	if got, want := buf.String(), "level=INFO msg=\"nothing in the group\"\n"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}

func TestAddWhileLogging(t *testing.T) {
	var buf syncBuffer
	r := new(logging.Redactor)
	log := slog.New(r.Handler(slog.NewTextHandler(&buf, nil)))
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 50 {
				log.Info("tick", "v", fmt.Sprintf("secret-number-%d-%02d", i, j))
			}
		})
	}
	for i := range 4 {
		for j := range 50 {
			r.Add(fmt.Sprintf("secret-number-%d-%02d", i, j))
		}
	}
	wg.Wait()
	log.Info("after", "v", "secret-number-3-49")
	out := buf.String()
	if !strings.HasSuffix(out, "msg=after v=[redacted]\n") {
		t.Errorf("last record: %q", out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1:])
	}
	if n := strings.Count(out, "\n"); n != 201 {
		t.Errorf("%d records; want 201", n)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func ExampleRedactor() {
	r := new(logging.Redactor)
	r.Add("corp-gateway-secret") // e.g. from config.Config.Secrets()
	fmt.Println(r.Redact("key=corp-gateway-secret auth: Bearer abc.def sk-ant-api03-0123456789abcdef"))
	// Output: key=[redacted] auth: Bearer [redacted] sk-ant-[redacted]
}
