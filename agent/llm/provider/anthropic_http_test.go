package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/internal/testenv"
)

// sentRequest is a request as a Messages server received it.
type sentRequest struct {
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Header http.Header `json:"header"`
	host   string
	body   []byte
}

// sendAnthropicCase sends the case's request through darman's client to a
// server that answers with an empty message, and returns what the server
// received.
func sendAnthropicCase(t *testing.T, c anthropicCase) sentRequest {
	t.Helper()
	var got sentRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = sentRequest{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header, host: r.Host, body: body}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer srv.Close()
	s := c.settings
	s.BaseURL = srv.URL
	cl, err := New(s, &Options{LookupEnv: func(k string) (string, bool) { return c.env[k], c.env[k] != "" }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Collect(cl.Stream(context.Background(), c.req())); err != nil {
		t.Fatal(err)
	}
	return got
}

// The SigV4 credentials of the bedrock-sigv4 case.
const (
	testAWSKeyID   = "AKIDEXAMPLE"
	testAWSSecret  = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testAWSSession = "session-token"
)

// Every request goes out as anthropic-sdk-go (v2.15.0) sent it before
// darman spoke Messages itself: the same path, body (as JSON) and
// authorisation. testdata/anthropic-sdk holds what the SDK sent for each
// case: NAME.json its method, path and headers, NAME.body.json its body.
func TestAnthropicBodiesAsTheSDKBuiltThem(t *testing.T) {
	for _, c := range anthropicCases() {
		t.Run(c.name, func(t *testing.T) {
			meta, err := os.ReadFile("testdata/anthropic-sdk/" + c.name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var want sentRequest
			if err := json.Unmarshal(meta, &want); err != nil {
				t.Fatal(err)
			}
			wantBody, err := os.ReadFile("testdata/anthropic-sdk/" + c.name + ".body.json")
			if err != nil {
				t.Fatal(err)
			}
			got := sendAnthropicCase(t, c)
			if got.Method != want.Method || got.Path != want.Path {
				t.Errorf("sent %s %s, want %s %s", got.Method, got.Path, want.Method, want.Path)
			}
			testenv.SameJSON(t, c.name, got.body, string(wantBody))
			// As the prompt has them, where the SDK escaped them.
			if strings.Contains(string(got.body), `\u003c`) {
				t.Errorf("the prompt's HTML characters were escaped: %s", got.body)
			}
			for _, h := range []string{"Accept", "Anthropic-Version", "Anthropic-Beta", "Content-Type", "X-Api-Key"} {
				if g, w := got.Header.Values(h), want.Header.Values(h); strings.Join(g, ",") != strings.Join(w, ",") {
					t.Errorf("header %s: %q, want %q", h, g, w)
				}
			}
			if c.name == "bedrock-sigv4" {
				checkSigV4(t, got, want)
			} else if g, w := got.Header.Get("Authorization"), want.Header.Get("Authorization"); g != w {
				t.Errorf("Authorization %q, want %q", g, w)
			}
		})
	}
}

// checkSigV4 checks that a Bedrock request is signed for the test
// credentials over the headers the SDK signed (less its own X-Stainless
// ones), and that the signature is the one SigV4 gives for the request as
// it arrived.
func checkSigV4(t *testing.T, got, want sentRequest) {
	t.Helper()
	signed := func(auth string) (scope, headers string) {
		for _, f := range strings.Split(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ", ") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "Credential":
				_, scope, _ = strings.Cut(v, "/")
				_, scope, _ = strings.Cut(scope, "/") // without the date
			case "SignedHeaders":
				var keep []string
				for _, h := range strings.Split(v, ";") {
					if !strings.HasPrefix(h, "x-stainless-") {
						keep = append(keep, h)
					}
				}
				headers = strings.Join(keep, ";")
			}
		}
		return scope, headers
	}
	auth := got.Header.Get("Authorization")
	gotScope, gotHeaders := signed(auth)
	wantScope, wantHeaders := signed(want.Header.Get("Authorization"))
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+testAWSKeyID+"/") || gotScope != wantScope || gotHeaders != wantHeaders {
		t.Fatalf("Authorization %q: scope %q, signed %q; want scope %q, signed %q", auth, gotScope, gotHeaders, wantScope, wantHeaders)
	}
	if v := got.Header.Get("X-Amz-Security-Token"); v != testAWSSession {
		t.Errorf("X-Amz-Security-Token %q", v)
	}
	creds := aws.Credentials{AccessKeyID: testAWSKeyID, SecretAccessKey: testAWSSecret, SessionToken: testAWSSession}
	if want := sigV4(t, got, gotHeaders, creds, "eu-west-1"); want != auth {
		t.Errorf("the signature is not SigV4's for the request as received:\n got %s\nwant %s", auth, want)
	}
}

// sigV4 is the Authorization that aws-sdk-go-v2's signer gives the request
// as it arrived, over the headers named (as in SignedHeaders), for the
// credentials and region.
func sigV4(t *testing.T, got sentRequest, headers string, creds aws.Credentials, region string) string {
	t.Helper()
	at, err := time.Parse("20060102T150405Z", got.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := http.NewRequest(got.Method, "http://"+got.host+got.Path, nil)
	r.Host = ""
	for _, h := range strings.Split(headers, ";") {
		if h != "host" {
			r.Header[http.CanonicalHeaderKey(h)] = got.Header.Values(h)
		}
	}
	r.ContentLength = int64(len(got.body))
	sum := sha256.Sum256(got.body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hex.EncodeToString(sum[:]), "bedrock", region, at); err != nil {
		t.Fatal(err)
	}
	return r.Header.Get("Authorization")
}
