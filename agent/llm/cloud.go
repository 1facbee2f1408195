package llm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Claude on Amazon Bedrock and Google Vertex AI speaks Anthropic's Messages
// API behind a cloud's own addresses and credentials.
//
// Bedrock goes through the Anthropic SDK's bedrock package: it signs with
// the AWS credential chain (environment, profiles, SSO, instance roles),
// which is large to get right, for about 3 MB of binary. The SDK's vertex
// package is not used: it pulls Google's API transport (gRPC, OpenCensus,
// OpenTelemetry), 35 MB of binary for an OAuth token and a URL. darman does
// what Vertex needs itself, with golang.org/x/oauth2/google for the
// credentials (0.1 MB).

// vertexAnthropicVersion is the API version Vertex AI wants in the body.
const vertexAnthropicVersion = "vertex-2023-10-16"

// newCloud finishes a Bedrock or Vertex client.
func (c *Client) newCloud(s Settings, p preset, o Options) (*Client, error) {
	headers := map[string]string{}
	for k, v := range s.Headers {
		headers[k] = v
	}
	idle := s.IdleTimeout
	if idle == 0 {
		idle = 5 * time.Minute
	}
	t := transport{headers: headers, http: o.HTTPClient, idle: idleWatch{timeout: idle}}
	if s.BaseURL != "" {
		base, err := c.resolveBaseURL(s.BaseURL, preset{}, o.LookupEnv)
		if err != nil {
			return nil, err
		}
		t.baseURL = base
	}
	c.api = originAnthropic
	if p.auth == "bedrock" {
		return c.bedrock(s, t, o)
	}
	return c.vertex(s, t, o)
}

func (c *Client) bedrock(s Settings, t transport, o Options) (*Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var load []func(*awsconfig.LoadOptions) error
	if s.Region != "" {
		load = append(load, awsconfig.WithRegion(s.Region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("provider %q: reading the AWS configuration: %w", c.name, err)
	}
	if cfg.Region == "" {
		return nil, fmt.Errorf("provider %q: no AWS region; set its \"region\" (e.g. us-east-1) or AWS_REGION", c.name)
	}
	key := s.APIKey
	c.keySource = "provider." + c.name + ".apiKey"
	if key == "" {
		if v, ok := o.LookupEnv("AWS_BEARER_TOKEN_BEDROCK"); ok && v != "" {
			key, c.keySource = v, "AWS_BEARER_TOKEN_BEDROCK"
		}
	}
	switch {
	case key != "":
		// A Bedrock API key is a bearer token.
		cfg.BearerAuthTokenProvider = bedrock.NewStaticBearerTokenProvider(key)
		cfg.AuthSchemePreference = []string{"httpBearerAuth"}
	case cfg.Credentials != nil:
		// Which source answers is known only when the credentials are
		// first retrieved (an instance role needs the network); name the
		// explicit ones.
		c.keySource = "the AWS credential chain (default profile, SSO or instance role)"
		if v, ok := o.LookupEnv("AWS_PROFILE"); ok && v != "" {
			c.keySource = "AWS profile " + v
		}
		if v, ok := o.LookupEnv("AWS_ACCESS_KEY_ID"); ok && v != "" {
			c.keySource = "AWS_ACCESS_KEY_ID"
		}
	default:
		return nil, &Error{Kind: ErrMissingKey, Provider: c.display,
			KeySource: "AWS credentials (AWS_ACCESS_KEY_ID, a profile, SSO) or AWS_BEARER_TOKEN_BEDROCK"}
	}
	c.baseURL = "https://bedrock-runtime." + cfg.Region + ".amazonaws.com"
	extra := []option.RequestOption{bedrock.WithConfig(cfg)}
	if t.baseURL != "" {
		// A configured address (a VPC endpoint, a test server) replaces
		// the region's; it must come after the Bedrock option that sets it.
		c.baseURL = t.baseURL
		extra = append(extra, option.WithBaseURL(t.baseURL+"/"))
	}
	t.baseURL = c.baseURL
	c.wire = newAnthropicWire(t, extra...)
	return c, nil
}

func (c *Client) vertex(s Settings, t transport, o Options) (*Client, error) {
	env := func(names ...string) string {
		for _, n := range names {
			if v, ok := o.LookupEnv(n); ok && v != "" {
				return v
			}
		}
		return ""
	}
	region := s.Region
	if region == "" {
		region = env("CLOUD_ML_REGION")
	}
	if region == "" {
		region = "global"
	}
	project := s.Project
	if project == "" {
		project = env("ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT")
	}
	if project == "" {
		return nil, fmt.Errorf("provider %q: no Google Cloud project; set its \"project\" or ANTHROPIC_VERTEX_PROJECT_ID", c.name)
	}
	var tokens oauth2.TokenSource
	if s.APIKey != "" {
		// An access token given as the key (gcloud auth print-access-token).
		tokens = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: s.APIKey})
		c.keySource = "provider." + c.name + ".apiKey"
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		creds, err := google.FindDefaultCredentials(ctx, "https://www.googleapis.com/auth/cloud-platform")
		if err != nil {
			return nil, &Error{Kind: ErrMissingKey, Provider: c.display, Err: err,
				KeySource: "Google application default credentials (gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS)"}
		}
		tokens = oauth2.ReuseTokenSource(nil, creds.TokenSource)
		c.keySource = "Google application default credentials"
	}
	switch region {
	case "global":
		c.baseURL = "https://aiplatform.googleapis.com"
	case "us", "eu":
		c.baseURL = "https://aiplatform." + region + ".rep.googleapis.com"
	default:
		c.baseURL = "https://" + region + "-aiplatform.googleapis.com"
	}
	if t.baseURL != "" {
		c.baseURL = t.baseURL
	}
	t.baseURL = c.baseURL
	c.wire = newAnthropicWire(t, option.WithMiddleware(vertexMiddleware(project, region, tokens)))
	return c, nil
}

// vertexMiddleware turns a Messages request into Vertex AI's: the model
// moves from the body into the path
// (/v1/projects/P/locations/R/publishers/anthropic/models/M:streamRawPredict),
// the API version into the body as anthropic_version, and the request is
// authorised with a Google access token.
func vertexMiddleware(project, region string, tokens oauth2.TokenSource) option.Middleware {
	return func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages") && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil {
				return nil, err
			}
			model := gjson.GetBytes(body, "model").String()
			if model == "" {
				return nil, fmt.Errorf("vertex: the request names no model")
			}
			method := "rawPredict"
			if gjson.GetBytes(body, "stream").Bool() {
				method = "streamRawPredict"
			}
			body, _ = sjson.DeleteBytes(body, "model")
			if !gjson.GetBytes(body, "anthropic_version").Exists() {
				body, _ = sjson.SetBytes(body, "anthropic_version", vertexAnthropicVersion)
			}
			r.Header.Del("anthropic-version")
			prefix := strings.TrimSuffix(r.URL.Path, "/v1/messages")
			tail := "/v1/projects/%s/locations/%s/publishers/anthropic/models/%s:" + method
			r.URL.Path = prefix + fmt.Sprintf(tail, project, region, model)
			r.URL.RawPath = prefix + fmt.Sprintf(tail, url.PathEscape(project), url.PathEscape(region), url.PathEscape(model))
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			r.ContentLength = int64(len(body))
		}
		tok, err := tokens.Token()
		if err != nil {
			return nil, &Error{Kind: ErrAuth, Message: "getting a Google access token: " + err.Error()}
		}
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		r.Header.Del("X-Api-Key")
		return next(r)
	}
}
