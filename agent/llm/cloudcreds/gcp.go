package cloudcreds

import (
	"cmp"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent/llm"
)

// darman finds Vertex AI's Google credentials itself, in the order of
// Google's application default credentials (ADC):
//
//  1. an access token as the provider's apiKey, which agent/llm/anthropic sends as
//     it is;
//  2. the JSON file GOOGLE_APPLICATION_CREDENTIALS names;
//  3. gcloud's application_default_credentials.json, which
//     `gcloud auth application-default login` writes, in $CLOUDSDK_CONFIG,
//     else ~/.config/gcloud (%APPDATA%\gcloud on Windows);
//  4. the metadata server, on Google Cloud (Compute Engine, GKE, Cloud
//     Run): at GCE_METADATA_HOST, else 169.254.169.254.
//
// Of the files, darman reads service account keys (a JWT it signs, for a
// token from the file's token_uri) and gcloud's user credentials
// (authorized_user: a refresh token) itself. The other kinds, workload
// identity federation's external_account and external_account_authorized_user,
// impersonated_service_account, go to the gcloud CLI:
// `gcloud auth application-default print-access-token`.
//
// golang.org/x/oauth2/google did all of this in-process, but at a price
// paid by every start of darman, Vertex or not: the package initialisers of
// its external account providers and of the metadata client (about 0.25 ms,
// and 0.4 MB of binary). Those who federate identities have gcloud already.

const (
	// gcpScope is the OAuth scope of the tokens Vertex AI takes.
	gcpScope = "https://www.googleapis.com/auth/cloud-platform"
	// gcpTokenURL is Google's token endpoint, for files that name none.
	gcpTokenURL = "https://oauth2.googleapis.com/token"
	// gcpMetadataHost is the metadata server's address on Google Cloud.
	gcpMetadataHost = "169.254.169.254"
	// ProductFile names the machine on Linux: "Google Compute Engine"
	// on Google's VMs, GKE's nodes among them.
	ProductFile = "/sys/class/dmi/id/product_name"
	// gcpTokenWindow is how long before its expiry a token is fetched
	// again: a request must not reach Google with an expired one. It is
	// less than the 4 minutes before expiry at which the metadata server
	// itself refreshes, so that a fetch in the window gets a new token.
	gcpTokenWindow = 3 * time.Minute
	// gcpTokenTimeout bounds a request to a token endpoint.
	gcpTokenTimeout = 30 * time.Second
	// gcpMetadataTimeout bounds a request to the metadata server, which
	// answers from the machine (or GKE's node) it runs on.
	gcpMetadataTimeout = 5 * time.Second
	// gcpProbeTimeout bounds the request to the metadata server where
	// only asking it tells whether darman runs on Google Cloud (Windows);
	// off Google Cloud nothing answers.
	gcpProbeTimeout = time.Second
	// gcloudTimeout bounds gcloud, which may need the network (a workload
	// identity pool's token exchange).
	gcloudTimeout = time.Minute
	// gcloudTokenLife is how long a token gcloud prints is taken to be
	// valid: gcloud does not say, and the shortest lifetime Google gives
	// an impersonated service account's token is 10 minutes.
	gcloudTokenLife = 10 * time.Minute
)

// GCP gives the access token Vertex AI's requests carry, and
// fetches another before it expires. It is safe for concurrent use;
// callers wait while one fetches, so that concurrent requests make one
// token request.
type GCP struct {
	// provider is the provider's display name, for errors.
	provider string
	// Source names where the tokens come from, for messages: the
	// provider's key source.
	Source string
	// refused says what to do when the token endpoint refuses the
	// credentials; empty when there is no advice beyond its own words.
	refused string
	// fetch gets a fresh token; nil for a static one.
	fetch func(ctx context.Context) (gcpToken, error)

	mu     sync.Mutex
	cached gcpToken
	have   bool
}

// gcpToken is an access token and when it expires; zero for never (a
// token given as the key).
type gcpToken struct {
	access  string
	expires time.Time
}

// StaticGCP sends a token given as the provider's key.
func StaticGCP(source, token string) *GCP {
	return &GCP{Source: source, cached: gcpToken{access: token}, have: true}
}

// Token gives an access token that is valid for gcpTokenWindow more,
// fetching one when the cached one is not. A fetched token with less
// time left is used once and fetched again for the next request.
func (g *GCP) Token(ctx context.Context) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.have && (g.cached.expires.IsZero() || time.Now().Add(gcpTokenWindow).Before(g.cached.expires)) {
		return g.cached.access, nil
	}
	t, err := g.fetch(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// The call was cancelled while the token was fetched.
			return "", context.Cause(ctx)
		}
		return "", g.error(err)
	}
	g.cached, g.have = t, true
	return t.access, nil
}

// gcpRefusal is an answer of a token endpoint or the metadata server that
// is not a token.
type gcpRefusal struct {
	// who is the server, with its address.
	who    string
	status int
	// code and description are Google's error and error_description;
	// text is the start of the body when it has no such JSON.
	code, description, text string
}

func (r *gcpRefusal) Error() string {
	msg := fmt.Sprintf("%s answered %d", r.who, r.status)
	switch {
	case r.code != "" && r.description != "":
		msg += " " + r.code + ": " + r.description
	case r.code != "":
		msg += " " + r.code
	case r.text != "":
		msg += ": " + r.text
	}
	return msg
}

// gcpUnreadable is an answer with a success status that is not a token.
type gcpUnreadable struct{ msg string }

func (u *gcpUnreadable) Error() string { return u.msg }

// error classifies a failed fetch: a refusal is the credentials' (or, with
// a 5xx, the server's, and worth a retry), a failed connection is the
// network's; a helper that failed found no credentials.
func (g *GCP) error(err error) *llm.Error {
	var own *llm.Error
	var refusal *gcpRefusal
	var unreadable *gcpUnreadable
	var uerr *url.Error
	what := "getting an access token from " + g.Source + ": "
	switch {
	case errors.As(err, &own):
		return own
	case errors.As(err, &refusal) && refusal.status >= 500:
		return &llm.Error{Kind: llm.ErrServer, Provider: g.provider, Status: refusal.status, KeySource: g.Source, Message: what + err.Error()}
	case errors.As(err, &refusal):
		// The error names the source as the key's.
		msg := err.Error()
		if g.refused != "" {
			msg += "; " + g.refused
		}
		return &llm.Error{Kind: llm.ErrAuth, Provider: g.provider, KeySource: g.Source, Message: msg}
	case errors.As(err, &unreadable):
		return &llm.Error{Kind: llm.ErrMalformed, Provider: g.provider, KeySource: g.Source, Message: what + err.Error()}
	case errors.As(err, &uerr):
		return &llm.Error{Kind: llm.ErrNetwork, Provider: g.provider, URL: uerr.URL, KeySource: g.Source, Message: what + err.Error(), Err: err}
	}
	return &llm.Error{Kind: llm.ErrMissingKey, Provider: g.provider, KeySource: g.Source, Message: g.Source + " " + err.Error()}
}

// gcpFile is a credentials file: the fields of the kinds darman reads
// itself, and the type of the others.
type gcpFile struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	PrivateKeyID string `json:"private_key_id"`
	PrivateKey   string `json:"private_key"`
	TokenURI     string `json:"token_uri"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	RefreshToken string `json:"refresh_token"`
}

// ResolveGCP picks the first source of the chain above that
// has credentials, and reads its file: a file that is there but wrong is
// an error, not a reason to look further. It sends and runs nothing: the
// first request fetches the token. The error says what was tried and what
// to do. Tokens are fetched with hc, the metadata server's apart;
// productFile is gcpProductFile but in tests.
func ResolveGCP(provider string, env Env, hc *http.Client, productFile string) (*GCP, error) {
	g := &GCP{provider: provider}
	fail := func(msg string) error { return &llm.Error{Kind: llm.ErrMissingKey, Provider: provider, Message: msg} }
	if path := env.Get("GOOGLE_APPLICATION_CREDENTIALS"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fail(fmt.Sprintf("reading the Google credentials file GOOGLE_APPLICATION_CREDENTIALS names: %v; "+
				"point it at a service account key or the file `gcloud auth application-default login` writes", err))
		}
		if err := g.useFile(data, path, path+" (GOOGLE_APPLICATION_CREDENTIALS)", env, hc); err != nil {
			return nil, fail(err.Error())
		}
		return g, nil
	}
	tried := []string{"GOOGLE_APPLICATION_CREDENTIALS is not set"}

	if dir := gcloudConfigDir(env); dir == "" {
		tried = append(tried, "no home directory to find gcloud's configuration in")
	} else {
		path := filepath.Join(dir, "application_default_credentials.json")
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			if err := g.useFile(data, path, path, env, hc); err != nil {
				var noGcloud *gcloudMissing
				if errors.As(err, &noGcloud) {
					return nil, fail(err.Error())
				}
				return nil, fail(err.Error() + "; run `gcloud auth application-default login` to write it again")
			}
			return g, nil
		case errors.Is(err, os.ErrNotExist):
			tried = append(tried, "no "+path)
		default:
			return nil, fail(fmt.Sprintf("reading gcloud's application default credentials: %v", err))
		}
	}

	host := env.Get("GCE_METADATA_HOST")
	on, why := onGoogleCloud(env, productFile)
	if host == "" {
		host = gcpMetadataHost
	}
	what := "run `gcloud auth application-default login`, set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, " +
		"or set the provider's apiKey to an access token (`gcloud auth print-access-token`)"
	switch on {
	case gcpYes:
		g.useMetadata(host, why, gcpMetadataTimeout, nil)
		return g, nil
	case gcpMaybe:
		// Only the metadata server can tell; if it does not answer,
		// there were no credentials.
		g.useMetadata(host, why, gcpProbeTimeout, func(err error) error {
			return fail(fmt.Sprintf("no Google application default credentials (tried: %s; no metadata server at %s (%v)); %s",
				strings.Join(tried, "; "), host, err, what))
		})
		return g, nil
	}
	tried = append(tried, "not on Google Cloud ("+why+")")
	return nil, fail("no Google application default credentials (tried: " + strings.Join(tried, "; ") + "); " + what)
}

// gcloudConfigDir is where gcloud keeps its configuration, and
// `gcloud auth application-default login` its credentials; empty when
// there is no home directory.
func gcloudConfigDir(env Env) string {
	if dir := env.Get("CLOUDSDK_CONFIG"); dir != "" {
		return dir
	}
	if runtime.GOOS == "windows" {
		if dir := env.Get("APPDATA"); dir != "" {
			return filepath.Join(dir, "gcloud")
		}
		return ""
	}
	if home := env.Get("HOME"); home != "" {
		return filepath.Join(home, ".config", "gcloud")
	}
	return ""
}

// useFile sets g to the credentials of a file read from path; where names
// it for messages.
func (g *GCP) useFile(data []byte, path, where string, env Env, hc *http.Client) error {
	var f gcpFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("%s is not a Google credentials file (%v)", where, err)
	}
	missing := func(fields ...string) error {
		var none []string
		for i := 0; i < len(fields); i += 2 {
			if fields[i+1] == "" {
				none = append(none, fields[i])
			}
		}
		if none == nil {
			return nil
		}
		return fmt.Errorf("the %s credentials in %s have no %s", f.Type, where, strings.Join(none, ", no "))
	}
	switch f.Type {
	case "service_account":
		if err := missing("client_email", f.ClientEmail, "private_key", f.PrivateKey); err != nil {
			return err
		}
		key, err := parseGCPKey(f.PrivateKey)
		if err != nil {
			return fmt.Errorf("the private_key of the service account in %s: %v", where, err)
		}
		endpoint := cmp.Or(f.TokenURI, gcpTokenURL)
		g.Source = "the service account " + f.ClientEmail + " in " + where
		g.refused = "the key may have been deleted or disabled: create another (gcloud iam service-accounts keys create)"
		g.fetch = func(ctx context.Context) (gcpToken, error) {
			assertion, err := gcpAssertion(key, f.PrivateKeyID, f.ClientEmail, endpoint, time.Now())
			if err != nil {
				return gcpToken{}, err
			}
			return postGCPToken(ctx, hc, endpoint, url.Values{
				"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"},
				"assertion":  {assertion},
			})
		}
	case "authorized_user":
		if err := missing("client_id", f.ClientID, "client_secret", f.ClientSecret, "refresh_token", f.RefreshToken); err != nil {
			return err
		}
		endpoint := cmp.Or(f.TokenURI, gcpTokenURL)
		g.Source = "the user credentials in " + where
		g.refused = "run `gcloud auth application-default login` again"
		g.fetch = func(ctx context.Context) (gcpToken, error) {
			return postGCPToken(ctx, hc, endpoint, url.Values{
				"grant_type":    {"refresh_token"},
				"refresh_token": {f.RefreshToken},
				"client_id":     {f.ClientID},
				"client_secret": {f.ClientSecret},
			})
		}
	case "":
		return fmt.Errorf("%s has no \"type\"; a Google credentials file says what it holds (\"service_account\", \"authorized_user\", ...)", where)
	default:
		// Workload identity federation, impersonation and whatever comes
		// next: gcloud implements them.
		gcloud, err := exec.LookPath("gcloud")
		if err != nil {
			return &gcloudMissing{fmt.Sprintf("%s holds %q credentials, which darman gets from the gcloud CLI, and there is no gcloud on PATH: "+
				"install the Google Cloud CLI (https://cloud.google.com/sdk/docs/install), "+
				"or use a service account key or `gcloud auth application-default login`", where, f.Type)}
		}
		// gcloud reads the file darman found, whatever its own
		// environment says.
		vars := []string{"GOOGLE_APPLICATION_CREDENTIALS=" + path}
		if dir := env.Get("CLOUDSDK_CONFIG"); dir != "" {
			vars = append(vars, "CLOUDSDK_CONFIG="+dir)
		}
		argv := []string{gcloud, "auth", "application-default", "print-access-token"}
		g.Source = "gcloud auth application-default print-access-token, for the " + f.Type + " credentials in " + where
		g.fetch = func(ctx context.Context) (gcpToken, error) {
			return gcloudToken(ctx, argv, vars)
		}
	}
	return nil
}

// gcloudMissing is the error of a credentials file that needs gcloud
// where there is none.
type gcloudMissing struct{ msg string }

func (e *gcloudMissing) Error() string { return e.msg }

// parseGCPKey reads a service account's private key: an RSA key in PEM,
// PKCS #8 as Google writes them, or PKCS #1.
func parseGCPKey(text string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil, errors.New("it is not a PEM key (-----BEGIN PRIVATE KEY-----)")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("it is a %T, not an RSA key", k)
		}
		return rk, nil
	}
	k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("it is neither a PKCS #8 nor a PKCS #1 RSA key")
	}
	return k, nil
}

// gcpAssertion is the JWT a service account sends the token endpoint for
// a token (RFC 7523): signed with its key, RS256, valid for an hour.
func gcpAssertion(key *rsa.PrivateKey, keyID, email, audience string, now time.Time) (string, error) {
	header, err := json.Marshal(struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid,omitempty"`
	}{"RS256", "JWT", keyID})
	if err != nil {
		return "", err
	}
	// Issued a little in the past: Google refuses a JWT from the future,
	// and clocks differ.
	iat := now.Add(-10 * time.Second).Unix()
	claims, err := json.Marshal(struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
		Exp   int64  `json:"exp"`
		Iat   int64  `json:"iat"`
	}{email, gcpScope, audience, iat + 3600, iat})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("signing with the service account's key: %w", err)
	}
	return signed + "." + enc.EncodeToString(sig), nil
}

// postGCPToken asks a token endpoint for a token (a form POST, RFC 6749).
func postGCPToken(ctx context.Context, hc *http.Client, endpoint string, form url.Values) (gcpToken, error) {
	ctx, cancel := context.WithTimeout(ctx, gcpTokenTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return gcpToken{}, fmt.Errorf("the token_uri %q: %v", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "darman")
	res, err := hc.Do(req)
	if err != nil {
		return gcpToken{}, err
	}
	defer res.Body.Close()
	return readGCPToken(res, "Google's token endpoint "+endpoint)
}

// readGCPToken reads the JSON of a token endpoint or the metadata server:
// access_token and expires_in, or error and error_description.
func readGCPToken(res *http.Response, who string) (gcpToken, error) {
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return gcpToken{}, &url.Error{Op: res.Request.Method, URL: res.Request.URL.String(), Err: err}
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	bad := json.Unmarshal(body, &t)
	if res.StatusCode != http.StatusOK {
		r := &gcpRefusal{who: who, status: res.StatusCode, code: t.Error, description: t.Description}
		if bad != nil || t.Error == "" {
			text := strings.TrimSpace(string(body))
			text, _, _ = strings.Cut(text, "\n")
			if len(text) > 200 {
				text = text[:200] + "…"
			}
			r.text = text
		}
		return gcpToken{}, r
	}
	if bad != nil || t.AccessToken == "" {
		return gcpToken{}, &gcpUnreadable{who + " answered without an access_token"}
	}
	// A token without a lifetime is used for this request only.
	return gcpToken{access: t.AccessToken, expires: time.Now().Add(time.Duration(t.ExpiresIn) * time.Second)}, nil
}

// gcpPlace is what darman knows, without asking, of whether it runs on
// Google Cloud.
type gcpPlace int

const (
	gcpNo gcpPlace = iota
	gcpYes
	// gcpMaybe: only the metadata server can tell (Windows).
	gcpMaybe
)

// onGoogleCloud says whether darman runs where the metadata server gives
// tokens, and why it thinks so. It reads the environment and a file; it
// sends nothing, so that off Google Cloud nothing waits.
func onGoogleCloud(env Env, productFile string) (gcpPlace, string) {
	if env.Get("GCE_METADATA_HOST") != "" {
		return gcpYes, "GCE_METADATA_HOST"
	}
	// Cloud Run's services, jobs and functions, and App Engine, which
	// need not show the machine's product.
	for _, name := range []string{"K_SERVICE", "CLOUD_RUN_JOB", "GAE_SERVICE"} {
		if env.Get(name) != "" {
			return gcpYes, name + " (Cloud Run or App Engine)"
		}
	}
	switch runtime.GOOS {
	case "linux":
		data, err := os.ReadFile(productFile)
		if err == nil && strings.Contains(string(data), "Google") {
			return gcpYes, "a Google Compute Engine machine (" + productFile + ")"
		}
		return gcpNo, "GCE_METADATA_HOST is not set, and " + productFile + " does not name Google"
	case "windows":
		return gcpMaybe, "a Windows machine, perhaps on Compute Engine"
	}
	return gcpNo, "GCE_METADATA_HOST is not set"
}

// useMetadata sets g to the tokens of the metadata server's default
// service account. absent, when set, makes the error of a server that does
// not answer, or is not Google's.
func (g *GCP) useMetadata(host, why string, timeout time.Duration, absent func(error) error) {
	endpoint := "http://" + host + "/computeMetadata/v1/instance/service-accounts/default/token?scopes=" + url.QueryEscape(gcpScope)
	g.Source = "the metadata server's default service account (" + host + ", " + why + ")"
	g.refused = "give the machine or the workload a service account that may use Vertex AI"
	// Link-local: never through a proxy.
	hc := &http.Client{Transport: &http.Transport{}}
	g.fetch = func(ctx context.Context) (gcpToken, error) {
		t, err := metadataToken(ctx, hc, endpoint, timeout)
		var refusal *gcpRefusal
		if err != nil && absent != nil && ctx.Err() == nil && !errors.As(err, &refusal) {
			return gcpToken{}, absent(err)
		}
		return t, err
	}
}

// metadataToken asks the metadata server for a token.
func metadataToken(ctx context.Context, hc *http.Client, endpoint string, timeout time.Duration) (gcpToken, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return gcpToken{}, fmt.Errorf("the metadata server's address: %v", err)
	}
	req.Header.Set("Metadata-Flavor", "Google")
	req.Header.Set("User-Agent", "darman")
	res, err := hc.Do(req)
	if err != nil {
		return gcpToken{}, err
	}
	defer res.Body.Close()
	if res.Header.Get("Metadata-Flavor") != "Google" {
		// Another cloud's metadata server, or something else at the
		// address.
		return gcpToken{}, fmt.Errorf("got an answer (%d) without Metadata-Flavor: Google from %s, which is not Google Cloud's metadata server",
			res.StatusCode, endpoint)
	}
	return readGCPToken(res, "the metadata server "+endpoint)
}

// gcloudToken runs `gcloud auth application-default print-access-token`,
// which prints a token and nothing else.
func gcloudToken(ctx context.Context, argv, env []string) (gcpToken, error) {
	out, _, err := runCredentialHelper(ctx, "Google credentials", argv, env, gcloudTimeout)
	if err != nil {
		return gcpToken{}, err
	}
	tok := strings.TrimSpace(string(out))
	switch {
	case tok == "":
		return gcpToken{}, errors.New("printed no access token")
	case strings.ContainsAny(tok, " \t\r\n"):
		return gcpToken{}, fmt.Errorf("printed %d lines, not one access token", strings.Count(tok, "\n")+1)
	}
	return gcpToken{access: tok, expires: time.Now().Add(gcloudTokenLife)}, nil
}
