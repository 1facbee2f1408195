package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CheckLoopback refuses an HTTP listen address that is not on the
// loopback interface: the tools read the project and rename writes it.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %v (expected 127.0.0.1:PORT)", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--http %q: only a loopback address is allowed (127.0.0.1:PORT or [::1]:PORT); darman mcp reads and may write the project and must not be reachable from the network", addr)
	}
	return nil
}

// HTTPOptions configures the streamable HTTP handler.
type HTTPOptions struct {
	// Token, when set, must be sent by every request as
	// "Authorization: Bearer <Token>".
	Token string
}

// sessionTimeout closes a 2025-11-25 session no request has used for
// this long.
const sessionTimeout = 30 * time.Minute

// maxBody bounds a request body (the SDK's own default).
const maxBody = 4 << 20

// HTTPHandler serves streamable HTTP: the 2026-07-28 stateless protocol
// and the 2025-11-25 session protocol side by side (a request that
// starts or continues a session goes to the session handler, any other
// to the stateless one). Before either, it refuses with 403 a request
// whose Origin is present and not loopback, and with 401 one without
// the token when a token is set; the SDK itself refuses a Host that is
// not loopback on a loopback connection.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	get := func(*http.Request) *mcp.Server { return s.mcp }
	sessions := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Logger: s.log,
		// A client that loses a call's event stream resumes it with
		// Last-Event-ID instead of losing the answer (2025-11-25).
		EventStore: mcp.NewMemoryEventStore(nil),
		// A client that went away without DELETE does not hold its
		// session for ever.
		SessionTimeout: sessionTimeout,
	})
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true, Logger: s.log})
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") != "" {
			sessions.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
			if err != nil {
				http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" {
				serveInitialize(sessions, w, r)
				return
			}
		}
		stateless.ServeHTTP(w, r)
	})
	return checkOrigin(checkToken(opts.Token, route))
}

// initializeGrace is how long an initialize POST whose client went away
// still waits for the server's answer.
const initializeGrace = 10 * time.Second

// serveInitialize serves an initialize POST without ending it when its
// client goes away. The SDK closes a session whose initialize POST ends
// before initialize was handled, but the client was sent the stream's
// priming event and resumes it with Last-Event-ID (2025-11-25): it
// would find no session, and wait for its answer for ever. Held to the
// answer (or initializeGrace), the answer goes to the event store and
// the resumed stream replays it.
func serveInitialize(sessions http.Handler, w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	stop := context.AfterFunc(r.Context(), func() {
		t := time.AfterFunc(initializeGrace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})
	defer stop()
	sessions.ServeHTTP(w, r.WithContext(ctx))
}

// checkOrigin answers 403 to a request whose Origin header is present
// and not a loopback origin (a web page trying to reach the server);
// requests without Origin (non-browser clients) pass.
func checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
			http.Error(w, "Forbidden: the Origin "+origin+" is not a loopback origin", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func checkToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="darman mcp"`)
			http.Error(w, "Unauthorized: send Authorization: Bearer <token> (the token darman mcp printed, or the --token-file's content)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
