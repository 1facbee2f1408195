package server

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/internal/testenv"
)

// TestHTTPInitializeResumesAfterADroppedPOST: a client whose initialize
// POST breaks after the priming event (a proxy, a flaky network, a
// loaded machine) resumes the stream with Last-Event-ID, as the
// 2025-11-25 transport says, and gets its answer. The session must not
// be closed because the POST ended before the server had handled
// initialize: that lost the answer, and the client waited for ever.
func TestHTTPInitializeResumesAfterADroppedPOST(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := New(ctx, Options{Root: Root{Dir: testenv.Dir(t), Source: RootFromFlag}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// initialize waits until the client has gone: the order a loaded
	// machine gives now and then, made certain.
	release := make(chan struct{})
	srv.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" {
				<-release
			}
			return next(ctx, method, req)
		}
	})
	posted := make(chan struct{})
	handler := srv.HTTPHandler(HTTPOptions{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.ServeHTTP(w, r)
		if r.Method == http.MethodPost {
			close(posted)
		}
	}))
	defer hs.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	pctx, drop := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(pctx, http.MethodPost, hs.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	session := resp.Header.Get("Mcp-Session-Id")
	primeID := ""
	sc := bufio.NewScanner(resp.Body)
	for primeID == "" && sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			primeID = id
		}
	}
	if session == "" || primeID == "" {
		t.Fatalf("initialize POST: session %q, priming event %q; want both", session, primeID)
	}
	drop()
	resp.Body.Close()
	time.Sleep(50 * time.Millisecond) // let the server see the connection go
	close(release)
	select {
	case <-posted:
	case <-time.After(10 * time.Second):
		t.Fatal("the initialize POST's handler did not return after initialize was answered")
	}

	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", session)
	get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	get.Header.Set("Last-Event-ID", primeID)
	resp, err = http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("resuming the initialize stream: %s %s; want 200 and the answer", resp.Status, msg)
	}
	sc = bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"id":1`) {
			if !strings.Contains(data, `"protocolVersion":"2025-11-25"`) {
				t.Fatalf("the replayed answer: %s", data)
			}
			return
		}
	}
	t.Fatalf("the resumed stream ended without the initialize answer: %v", sc.Err())
}
