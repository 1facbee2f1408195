//go:build unix

package provider

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/cloudcreds"
)

// googleTokens is Google's token endpoint as a test server: it checks a
// service account's JWT with the account's public key (RFC 7523: RS256,
// the claims Google requires) or a user's refresh token, and answers with
// a token or with Google's error JSON. What it finds wrong is the
// error_description of its invalid_grant answer, for the test to show.
type googleTokens struct {
	url string
	// The service account: its public key, key id and email.
	public *rsa.PublicKey
	keyID  string
	email  string
	// The user credentials it accepts.
	clientID, clientSecret, refreshToken string

	mu        sync.Mutex
	expiresIn int
	// refuse, when set, is the status and error JSON of every answer.
	refuseStatus int
	refuse       string
	issued       int
	// hold, when set, delays the answers until it is closed; held is
	// closed at the first request.
	hold, held chan struct{}
}

func newGoogleTokens(t *testing.T) (*googleTokens, *rsa.PrivateKey) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := &googleTokens{public: &key.PublicKey, keyID: "key-0123", email: "vertex@my-project.iam.gserviceaccount.com",
		clientID: "client.apps.googleusercontent.com", clientSecret: "client-secret", refreshToken: "1//refresh",
		expiresIn: 3599}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	g.url = srv.URL
	return g, key
}

func (g *googleTokens) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	hold, held := g.hold, g.held
	g.hold = nil
	g.mu.Unlock()
	if hold != nil {
		close(held)
		<-hold
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	problem := ""
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/token":
		problem = "not POST /token: " + r.Method + " " + r.URL.Path
	case r.Header.Get("Content-Type") != "application/x-www-form-urlencoded":
		problem = "Content-Type " + r.Header.Get("Content-Type")
	case r.ParseForm() != nil:
		problem = "not a form"
	case r.PostForm.Get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer":
		problem = g.checkJWT(r.PostForm.Get("assertion"))
	case r.PostForm.Get("grant_type") == "refresh_token":
		if r.PostForm.Get("client_id") != g.clientID || r.PostForm.Get("client_secret") != g.clientSecret ||
			r.PostForm.Get("refresh_token") != g.refreshToken {
			problem = "wrong client or refresh token: " + r.PostForm.Encode()
		}
	default:
		problem = "grant_type " + r.PostForm.Get("grant_type")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if problem != "" {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": problem})
		return
	}
	if g.refuse != "" {
		w.WriteHeader(g.refuseStatus)
		fmt.Fprint(w, g.refuse)
		return
	}
	g.issued++
	json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("ya29.token-%d", g.issued),
		"expires_in": g.expiresIn, "token_type": "Bearer"})
}

// checkJWT verifies a service account's assertion as Google does; it
// returns what is wrong with it.
func (g *googleTokens) checkJWT(jwt string) string {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return fmt.Sprintf("a JWT of %d parts", len(parts))
	}
	var header struct{ Alg, Typ, Kid string }
	var claims struct {
		Iss, Scope, Aud string
		Exp, Iat        int64
	}
	for i, v := range []any{&header, &claims} {
		data, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return "part " + fmt.Sprint(i) + " is not base64url: " + err.Error()
		}
		if err := json.Unmarshal(data, v); err != nil {
			return "part " + fmt.Sprint(i) + " is not JSON: " + err.Error()
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "the signature is not base64url"
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	now := time.Now().Unix()
	switch {
	case header.Alg != "RS256" || header.Typ != "JWT" || header.Kid != g.keyID:
		return fmt.Sprintf("header %+v", header)
	case claims.Iss != g.email:
		return "iss " + claims.Iss
	case claims.Scope != "https://www.googleapis.com/auth/cloud-platform":
		return "scope " + claims.Scope
	case claims.Aud != g.url+"/token":
		return "aud " + claims.Aud
	case claims.Iat > now || claims.Iat < now-60:
		return fmt.Sprintf("iat %d, now %d", claims.Iat, now)
	case claims.Exp-claims.Iat != 3600:
		return fmt.Sprintf("exp %d is not an hour after iat %d", claims.Exp, claims.Iat)
	case rsa.VerifyPKCS1v15(g.public, crypto.SHA256, sum[:], sig) != nil:
		return "Invalid JWT Signature."
	}
	return ""
}

// change changes the server's answers.
func (g *googleTokens) change(f func(g *googleTokens)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f(g)
}

func (g *googleTokens) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.issued
}

// serviceAccountFile is a service account key file as the Cloud console
// writes it, with key in PEM of the given block type.
func (g *googleTokens) serviceAccountFile(t *testing.T, key *rsa.PrivateKey, pkcs1 bool) string {
	t.Helper()
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}
	if !pkcs1 {
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		block = &pem.Block{Type: "PRIVATE KEY", Bytes: der}
	}
	data, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "my-project", "private_key_id": g.keyID,
		"private_key": string(pem.EncodeToMemory(block)), "client_email": g.email, "client_id": "1234567890",
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": g.url + "/token",
	})
	return string(data)
}

// userFile is the file `gcloud auth application-default login` writes.
func (g *googleTokens) userFile(tokenURI string) string {
	data, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": g.clientID,
		"client_secret": g.clientSecret, "refresh_token": g.refreshToken, "token_uri": tokenURI,
		"quota_project_id": "my-project", "account": ""})
	return string(data)
}

// vertexTarget is a Vertex AI server that records what it receives.
type vertexTarget struct{ *bedrockTarget }

func newVertexTarget(t *testing.T) vertexTarget { return vertexTarget{newBedrockTarget(t)} }

// client is a vertex provider against the server, with the environment
// env and nothing else of the process's (its PATH apart, which finds
// gcloud).
func (v vertexTarget) client(env map[string]string) (*llm.Client, error) {
	return New(Settings{Name: "vertex", BaseURL: v.url, Region: "us-east5", Project: "my-project"},
		&Options{LookupEnv: func(k string) (string, bool) { s, ok := env[k]; return s, ok }, Retry: llm.RetryPolicy{MaxAttempts: 1}})
}

func (v vertexTarget) mustClient(t *testing.T, env map[string]string) *llm.Client {
	t.Helper()
	c, err := v.client(env)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// send makes one call; it returns the Authorization the server received,
// if it received the call.
func (v vertexTarget) send(t *testing.T, c *llm.Client) (string, bool, error) {
	t.Helper()
	n := len(v.sent)
	_, err := llm.Collect(c.Stream(context.Background(), &llm.Request{Model: "claude-sonnet-4-5@20250929", Messages: []llm.Message{llm.UserText("hi")}}))
	if len(v.sent) == n {
		return "", false, err
	}
	got := v.sent[len(v.sent)-1]
	if !strings.HasSuffix(got.Path, "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict") {
		t.Errorf("path %s", got.Path)
	}
	return got.Header.Get("Authorization"), true, err
}

// mustSend sends one call and checks that it carried the token.
func (v vertexTarget) mustSend(t *testing.T, c *llm.Client, token string) {
	t.Helper()
	auth, sent, err := v.send(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if !sent {
		t.Fatal("the server received nothing")
	}
	if auth != "Bearer "+token {
		t.Errorf("Authorization %q, want Bearer %s", auth, token)
	}
}

// mustFail sends one call and checks that nothing went out and that the
// error is of kind and contains want.
func (v vertexTarget) mustFail(t *testing.T, c *llm.Client, kind llm.Kind, want string) {
	t.Helper()
	auth, sent, err := v.send(t, c)
	if sent {
		t.Fatalf("a request went out, with %s", auth)
	}
	if !errors.Is(err, kind) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v\nwant a %s containing %q", err, kind, want)
	}
}

// noGcloud takes every directory that has a gcloud out of PATH.
func noGcloud(t *testing.T) {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "gcloud")); err != nil {
			keep = append(keep, dir)
		}
	}
	t.Setenv("PATH", strings.Join(keep, string(filepath.ListSeparator)))
}

// A service account key, PKCS #8 as Google writes them or PKCS #1, named
// by GOOGLE_APPLICATION_CREDENTIALS: darman signs the JWT the token
// endpoint checks, and sends the token it gets until it is about to
// expire.
func TestVertexServiceAccount(t *testing.T) {
	noGcloud(t)
	tokens, key := newGoogleTokens(t)
	v := newVertexTarget(t)
	dir := t.TempDir()
	for i, pkcs1 := range []bool{false, true} {
		file := writeFile(t, fmt.Sprintf("%s/key-%d.json", dir, i), tokens.serviceAccountFile(t, key, pkcs1), 0o600)
		c := v.mustClient(t, map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": file, "HOME": dir})
		if want := "the service account " + tokens.email + " in " + file + " (GOOGLE_APPLICATION_CREDENTIALS)"; c.KeySource() != want {
			t.Errorf("key source %q, want %q", c.KeySource(), want)
		}
		if n := tokens.count(); n != i {
			t.Fatalf("%d tokens issued before any request", n-i)
		}
		token := fmt.Sprintf("ya29.token-%d", i+1)
		v.mustSend(t, c, token)
		v.mustSend(t, c, token)
		if n := tokens.count(); n != i+1 {
			t.Errorf("%d tokens issued, want one per client", n)
		}
	}
}

// A token is fetched again once it has less than a few minutes left; one
// that has more is sent again.
func TestVertexTokenRefresh(t *testing.T) {
	noGcloud(t)
	tokens, key := newGoogleTokens(t)
	v := newVertexTarget(t)
	file := writeFile(t, t.TempDir()+"/key.json", tokens.serviceAccountFile(t, key, false), 0o600)
	c := v.mustClient(t, map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": file})
	tokens.change(func(g *googleTokens) { g.expiresIn = 60 })
	v.mustSend(t, c, "ya29.token-1")
	v.mustSend(t, c, "ya29.token-2")
	tokens.change(func(g *googleTokens) { g.expiresIn = 3599 })
	v.mustSend(t, c, "ya29.token-3")
	v.mustSend(t, c, "ya29.token-3")
}

// Requests that need a token at once wait for one fetch of it.
func TestVertexConcurrentTokens(t *testing.T) {
	noGcloud(t)
	tokens, key := newGoogleTokens(t)
	file := writeFile(t, t.TempDir()+"/key.json", tokens.serviceAccountFile(t, key, false), 0o600)
	g, err := cloudcreds.ResolveGCP("Google Vertex AI", func(k string) (string, bool) {
		return file, k == "GOOGLE_APPLICATION_CREDENTIALS"
	}, http.DefaultClient, cloudcreds.ProductFile)
	if err != nil {
		t.Fatal(err)
	}
	hold, held := make(chan struct{}), make(chan struct{})
	tokens.change(func(g *googleTokens) { g.hold, g.held = hold, held })
	got := make([]string, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			tok, err := g.Token(context.Background())
			if err != nil {
				t.Error(err)
			}
			got[i] = tok
		})
	}
	<-held
	close(hold)
	wg.Wait()
	for i, tok := range got {
		if tok != "ya29.token-1" {
			t.Errorf("call %d got %q", i, tok)
		}
	}
	if n := tokens.count(); n != 1 {
		t.Errorf("%d tokens issued, want 1", n)
	}
}

// gcloud's own file, from `gcloud auth application-default login`: in
// CLOUDSDK_CONFIG, else ~/.config/gcloud; its refresh token gets the
// token. GOOGLE_APPLICATION_CREDENTIALS comes first.
func TestVertexUserCredentials(t *testing.T) {
	noGcloud(t)
	tokens, key := newGoogleTokens(t)
	v := newVertexTarget(t)
	home := t.TempDir()
	wellKnown := writeFile(t, home+"/.config/gcloud/application_default_credentials.json", tokens.userFile(tokens.url+"/token"), 0o600)
	config := t.TempDir()
	inConfig := writeFile(t, config+"/application_default_credentials.json", tokens.userFile(tokens.url+"/token"), 0o600)
	file := writeFile(t, t.TempDir()+"/key.json", tokens.serviceAccountFile(t, key, false), 0o600)
	for i, c := range []struct {
		name   string
		env    map[string]string
		source string
	}{
		{"HOME", map[string]string{"HOME": home}, "the user credentials in " + wellKnown},
		{"CLOUDSDK_CONFIG", map[string]string{"HOME": home, "CLOUDSDK_CONFIG": config}, "the user credentials in " + inConfig},
		{"GOOGLE_APPLICATION_CREDENTIALS first", map[string]string{"HOME": home, "GOOGLE_APPLICATION_CREDENTIALS": file},
			"the service account " + tokens.email + " in " + file + " (GOOGLE_APPLICATION_CREDENTIALS)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := v.mustClient(t, c.env)
			if cl.KeySource() != c.source {
				t.Errorf("key source %q, want %q", cl.KeySource(), c.source)
			}
			v.mustSend(t, cl, fmt.Sprintf("ya29.token-%d", i+1))
		})
	}
}

// A refused token request fails the call with Google's error and what to
// do; a failing token endpoint, or none reached, fails it as a server or
// network error (which are retried).
func TestVertexTokenRefused(t *testing.T) {
	noGcloud(t)
	tokens, _ := newGoogleTokens(t)
	v := newVertexTarget(t)
	home := t.TempDir()
	file := writeFile(t, home+"/.config/gcloud/application_default_credentials.json", tokens.userFile(tokens.url+"/token"), 0o600)
	c := v.mustClient(t, map[string]string{"HOME": home})
	tokens.change(func(g *googleTokens) {
		g.refuseStatus, g.refuse = 400, `{"error": "invalid_grant", "error_description": "Token has been expired or revoked."}`
	})
	v.mustFail(t, c, llm.ErrAuth, "the Google Vertex AI API rejected the key from the user credentials in "+file+": Google's token endpoint "+
		tokens.url+"/token answered 400 invalid_grant: Token has been expired or revoked.; run `gcloud auth application-default login` again")
	tokens.change(func(g *googleTokens) { g.refuseStatus, g.refuse = 503, "backend unavailable" })
	v.mustFail(t, c, llm.ErrServer, "getting an access token from the user credentials in "+file+": Google's token endpoint "+
		tokens.url+"/token answered 503: backend unavailable")
	// The default endpoint when the file names none.
	writeFile(t, file, tokens.userFile(""), 0o600)
	g, err := cloudcreds.ResolveGCP("Google Vertex AI", func(k string) (string, bool) { return home, k == "HOME" }, &http.Client{
		Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return nil, fmt.Errorf("no network in tests (%s)", r.URL)
		})}, cloudcreds.ProductFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Token(context.Background()); !errors.Is(err, llm.ErrNetwork) || !strings.Contains(err.Error(), "(https://oauth2.googleapis.com/token)") {
		t.Errorf("error %v, want a network error for https://oauth2.googleapis.com/token", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// metadataServer is Google Cloud's metadata server as a test server: it
// gives the default service account's token to requests that carry
// Metadata-Flavor: Google and ask for Vertex AI's scope.
func metadataServer(t *testing.T, status int, flavor bool) (host string, requests *int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		count := n
		mu.Unlock()
		if flavor {
			w.Header().Set("Metadata-Flavor", "Google")
		}
		switch {
		case r.Header.Get("Metadata-Flavor") != "Google":
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, "Missing Metadata-Flavor:Google header.\n")
		case r.URL.Path != "/computeMetadata/v1/instance/service-accounts/default/token" ||
			r.URL.Query().Get("scopes") != "https://www.googleapis.com/auth/cloud-platform":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, "no such path %s\n", r.URL)
		case status != http.StatusOK:
			w.WriteHeader(status)
			fmt.Fprint(w, "The service account was not found.\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"access_token":"ya29.metadata-%d","expires_in":3599,"token_type":"Bearer"}`, count)
		}
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Host, &n
}

// On Google Cloud, the metadata server at GCE_METADATA_HOST gives the
// token, once while it is valid; a server that is not Google's, or has no
// service account for the machine, fails the call with what to do.
func TestVertexMetadataServer(t *testing.T) {
	noGcloud(t)
	v := newVertexTarget(t)
	home := t.TempDir()
	host, n := metadataServer(t, http.StatusOK, true)
	c := v.mustClient(t, map[string]string{"HOME": home, "GCE_METADATA_HOST": host})
	if want := "the metadata server's default service account (" + host + ", GCE_METADATA_HOST)"; c.KeySource() != want {
		t.Errorf("key source %q, want %q", c.KeySource(), want)
	}
	v.mustSend(t, c, "ya29.metadata-1")
	v.mustSend(t, c, "ya29.metadata-1")
	if *n != 1 {
		t.Errorf("the metadata server was asked %d times", *n)
	}

	host, _ = metadataServer(t, http.StatusNotFound, true)
	c = v.mustClient(t, map[string]string{"HOME": home, "GCE_METADATA_HOST": host})
	v.mustFail(t, c, llm.ErrAuth, "answered 404: The service account was not found.; give the machine or the workload a service account that may use Vertex AI")

	host, _ = metadataServer(t, http.StatusOK, false)
	c = v.mustClient(t, map[string]string{"HOME": home, "GCE_METADATA_HOST": host})
	v.mustFail(t, c, llm.ErrMissingKey, "got an answer (200) without Metadata-Flavor: Google from http://"+host+
		"/computeMetadata/v1/instance/service-accounts/default/token?scopes=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fcloud-platform, which is not Google Cloud's metadata server")
}

// Off Google Cloud without a credentials file the provider is not built,
// and the error says what was tried and what to do; on a Compute Engine
// machine the metadata server is the source.
func TestVertexNoCredentials(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the machine's product is read on Linux")
	}
	noGcloud(t)
	home, dir := t.TempDir(), t.TempDir()
	pc := writeFile(t, dir+"/pc", "Standard PC (Q35 + ICH9, 2009)\n", 0o644)
	gce := writeFile(t, dir+"/gce", "Google Compute Engine\n", 0o644)
	env := func(k string) (string, bool) { return home, k == "HOME" }
	_, err := cloudcreds.ResolveGCP("Google Vertex AI", env, http.DefaultClient, pc)
	want := "no API key for Google Vertex AI: no Google application default credentials (tried: GOOGLE_APPLICATION_CREDENTIALS is not set; " +
		"no " + home + "/.config/gcloud/application_default_credentials.json; not on Google Cloud (GCE_METADATA_HOST is not set, and " +
		pc + " does not name Google)); run `gcloud auth application-default login`, set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, " +
		"or set the provider's apiKey to an access token (`gcloud auth print-access-token`)"
	if !errors.Is(err, llm.ErrMissingKey) || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
	_, err = cloudcreds.ResolveGCP("Google Vertex AI", func(string) (string, bool) { return "", false }, http.DefaultClient, dir+"/absent")
	if err == nil || !strings.Contains(err.Error(), "(tried: GOOGLE_APPLICATION_CREDENTIALS is not set; no home directory to find gcloud's configuration in; not on Google Cloud") {
		t.Errorf("error %v", err)
	}
	g, err := cloudcreds.ResolveGCP("Google Vertex AI", env, http.DefaultClient, gce)
	if err != nil {
		t.Fatal(err)
	}
	if want := "the metadata server's default service account (169.254.169.254, a Google Compute Engine machine (" + gce + "))"; g.Source != want {
		t.Errorf("source %q, want %q", g.Source, want)
	}
	// Cloud Run says so in its environment.
	g, err = cloudcreds.ResolveGCP("Google Vertex AI", func(k string) (string, bool) { return "darman", k == "K_SERVICE" }, http.DefaultClient, pc)
	if err != nil || !strings.HasPrefix(g.Source, "the metadata server's default service account (169.254.169.254, K_SERVICE") {
		t.Errorf("on Cloud Run: %v, %+v", err, g)
	}
}

// A credentials file that is there but wrong is an error that names the
// file and what is wrong with it, not a reason to look further.
func TestVertexBadCredentialFiles(t *testing.T) {
	noGcloud(t)
	tokens, key := newGoogleTokens(t)
	v := newVertexTarget(t)
	dir := t.TempDir()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(ec)
	ecPEM, _ := json.Marshal(string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	good := tokens.serviceAccountFile(t, key, false)
	for _, c := range []struct{ name, file, want string }{
		{"not JSON", `{"type": "service_account",`, "FILE (GOOGLE_APPLICATION_CREDENTIALS) is not a Google credentials file (unexpected end of JSON input)"},
		{"no type", `{"client_email": "a@b"}`, `FILE (GOOGLE_APPLICATION_CREDENTIALS) has no "type"; a Google credentials file says what it holds ("service_account", "authorized_user", ...)`},
		{"no key", `{"type": "service_account", "client_email": "a@b"}`, "the service_account credentials in FILE (GOOGLE_APPLICATION_CREDENTIALS) have no private_key"},
		{"no client or token", `{"type": "authorized_user", "client_id": "c"}`, "the authorized_user credentials in FILE (GOOGLE_APPLICATION_CREDENTIALS) have no client_secret, no refresh_token"},
		{"not PEM", strings.Replace(good, "-----BEGIN PRIVATE KEY-----", "", 1), "the private_key of the service account in FILE (GOOGLE_APPLICATION_CREDENTIALS): it is not a PEM key"},
		{"not RSA", `{"type": "service_account", "client_email": "a@b", "private_key": ` + string(ecPEM) + `}`, "the private_key of the service account in FILE (GOOGLE_APPLICATION_CREDENTIALS): it is a *ecdsa.PrivateKey, not an RSA key"},
		{"federated without gcloud", `{"type": "external_account", "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q"}`,
			`FILE (GOOGLE_APPLICATION_CREDENTIALS) holds "external_account" credentials, which darman gets from the gcloud CLI, and there is no gcloud on PATH: ` +
				"install the Google Cloud CLI (https://cloud.google.com/sdk/docs/install), or use a service account key or `gcloud auth application-default login`"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := writeFile(t, dir+"/"+strings.ReplaceAll(c.name, " ", "-")+".json", c.file, 0o600)
			_, err := v.client(map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": file})
			want := "no API key for Google Vertex AI: " + strings.ReplaceAll(c.want, "FILE", file)
			if !errors.Is(err, llm.ErrMissingKey) || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v\nwant it to contain %s", err, want)
			}
		})
	}
	_, err = v.client(map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": dir + "/absent.json"})
	if want := "reading the Google credentials file GOOGLE_APPLICATION_CREDENTIALS names: open " + dir + "/absent.json: no such file or directory; " +
		"point it at a service account key or the file `gcloud auth application-default login` writes"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v\nwant %s", err, want)
	}
	// gcloud's own file, broken, is written again by gcloud.
	home := t.TempDir()
	wellKnown := writeFile(t, home+"/.config/gcloud/application_default_credentials.json", "{", 0o600)
	_, err = v.client(map[string]string{"HOME": home})
	if want := wellKnown + " is not a Google credentials file (unexpected end of JSON input); run `gcloud auth application-default login` to write it again"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v\nwant %s", err, want)
	}
	// One that needs gcloud says to install it.
	writeFile(t, wellKnown, `{"type": "external_account_authorized_user"}`, 0o600)
	_, err = v.client(map[string]string{"HOME": home})
	if want := wellKnown + ` holds "external_account_authorized_user" credentials, which darman gets from the gcloud CLI, and there is no gcloud on PATH: ` +
		"install the Google Cloud CLI (https://cloud.google.com/sdk/docs/install), or use a service account key or `gcloud auth application-default login`"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %v\nwant it to end %s", err, want)
	}
}

// fakeGcloud puts on PATH a gcloud that records its arguments and the
// credentials file and configuration it was given, then runs body.
func fakeGcloud(t *testing.T, body string) (args string) {
	t.Helper()
	noGcloud(t)
	bin := t.TempDir()
	args = bin + "/args"
	writeFile(t, bin+"/gcloud", `#!/bin/sh
echo "$*" >>"`+args+`"
echo "GOOGLE_APPLICATION_CREDENTIALS=$GOOGLE_APPLICATION_CREDENTIALS CLOUDSDK_CONFIG=$CLOUDSDK_CONFIG" >>"`+args+`"
`+body+"\n", 0o755)
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	return args
}

// Credentials darman does not read itself (workload identity federation,
// impersonation) are gcloud's: it prints a token for the file darman
// found, and runs again only when the token may have expired.
func TestVertexCredentialsFromGcloud(t *testing.T) {
	args := fakeGcloud(t, "echo ya29.from-gcloud")
	v := newVertexTarget(t)
	dir := t.TempDir()
	federated := writeFile(t, dir+"/federated.json", `{"type": "external_account", "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q",
		"subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": "https://sts.googleapis.com/v1/token", "credential_source": {"file": "/var/run/token"}}`, 0o600)
	c := v.mustClient(t, map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": federated})
	if want := "gcloud auth application-default print-access-token, for the external_account credentials in " + federated + " (GOOGLE_APPLICATION_CREDENTIALS)"; c.KeySource() != want {
		t.Errorf("key source %q, want %q", c.KeySource(), want)
	}
	if readText(t, args) != "" {
		t.Fatal("gcloud ran before any request")
	}
	v.mustSend(t, c, "ya29.from-gcloud")
	v.mustSend(t, c, "ya29.from-gcloud")
	if got, want := readText(t, args), "auth application-default print-access-token\nGOOGLE_APPLICATION_CREDENTIALS="+federated+" CLOUDSDK_CONFIG=\n"; got != want {
		t.Errorf("gcloud ran as\n%s\nwant once, as\n%s", got, want)
	}

	// gcloud's own file, in CLOUDSDK_CONFIG: gcloud is told of both.
	os.Remove(args)
	config := t.TempDir()
	impersonated := writeFile(t, config+"/application_default_credentials.json", `{"type": "impersonated_service_account",
		"service_account_impersonation_url": "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:generateAccessToken",
		"source_credentials": {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}}`, 0o600)
	c = v.mustClient(t, map[string]string{"CLOUDSDK_CONFIG": config})
	v.mustSend(t, c, "ya29.from-gcloud")
	if got, want := readText(t, args), "auth application-default print-access-token\nGOOGLE_APPLICATION_CREDENTIALS="+impersonated+" CLOUDSDK_CONFIG="+config+"\n"; got != want {
		t.Errorf("gcloud ran as\n%s\nwant\n%s", got, want)
	}
}

// When gcloud fails or prints something else than a token, the call fails
// with what it said.
func TestVertexGcloudFails(t *testing.T) {
	dir := t.TempDir()
	federated := writeFile(t, dir+"/federated.json", `{"type": "external_account_authorized_user"}`, 0o600)
	source := "gcloud auth application-default print-access-token, for the external_account_authorized_user credentials in " + federated + " (GOOGLE_APPLICATION_CREDENTIALS)"
	for _, c := range []struct{ name, body, want string }{
		{"exit", "echo 'ERROR: (gcloud.auth.application-default.print-access-token) There was a problem refreshing your current auth tokens: invalid_grant' >&2; exit 1",
			"no API key for Google Vertex AI: " + source + " failed (exit status 1): ERROR: (gcloud.auth.application-default.print-access-token) There was a problem refreshing your current auth tokens: invalid_grant"},
		{"nothing", "true", source + " printed no access token"},
		{"chatter", "echo 'Updates are available'; echo ya29.x", source + " printed 2 lines, not one access token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeGcloud(t, c.body)
			v := newVertexTarget(t)
			v.mustFail(t, v.mustClient(t, map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": federated}), llm.ErrMissingKey, c.want)
		})
	}
}

// A token given as the key is sent as it is, whatever else there is.
func TestVertexTokenAsKey(t *testing.T) {
	noGcloud(t)
	v := newVertexTarget(t)
	c, err := New(Settings{Name: "vertex", BaseURL: v.url, Region: "us-east5", Project: "my-project", APIKey: "ya29.given"},
		&Options{LookupEnv: func(k string) (string, bool) { return "/nonexistent.json", k == "GOOGLE_APPLICATION_CREDENTIALS" }})
	if err != nil {
		t.Fatal(err)
	}
	if c.KeySource() != "provider.vertex.apiKey" {
		t.Errorf("key source %q", c.KeySource())
	}
	v.mustSend(t, c, "ya29.given")
}
