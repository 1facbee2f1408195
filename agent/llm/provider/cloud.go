package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/llm/internal/wire"

	"github.com/darman-dev/darman/agent/llm"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Claude on Amazon Bedrock and Google Vertex AI speaks Anthropic's Messages
// API behind a cloud's own addresses and credentials.
//
// darman's Messages client (anthropic.go) adapts its requests to both, as
// the Anthropic SDK's bedrock middleware did: for Bedrock it signs with
// aws-sdk-go-v2's SigV4 signer and credentials darman finds itself
// (awscreds.go: the environment, the profile's keys or credential_process,
// else the AWS CLI v2 for SSO and roles), and reads the AWS event stream
// framing with aws-sdk-go-v2's decoder. For Vertex it sends a Google
// access token that darman gets itself (gcpcreds.go: the application
// default credentials' files and metadata server, else gcloud). The SDK's
// vertex package was never used: it pulls Google's API transport (gRPC,
// OpenCensus, OpenTelemetry), 35 MB of binary for an OAuth token and a URL.

// vertexAnthropicVersion is the API version Vertex AI wants in the body.
const vertexAnthropicVersion = "vertex-2023-10-16"

// newCloud finishes a Bedrock or Vertex client.
func newCloud(c *llm.Config, s Settings, p preset, o Options) error {
	headers := map[string]string{}
	for k, v := range s.Headers {
		headers[k] = v
	}
	idle := s.IdleTimeout
	if idle == 0 {
		idle = 5 * time.Minute
	}
	t := wire.Transport{Headers: headers, HTTP: o.HTTPClient, Idle: wire.IdleWatch{Timeout: idle}}
	if s.BaseURL != "" {
		base, err := resolveBaseURL(c.Name, s.BaseURL, preset{}, o.LookupEnv)
		if err != nil {
			return err
		}
		t.BaseURL = base
	}
	c.API = llm.OriginAnthropic
	if p.auth == "bedrock" {
		return bedrock(c, s, t, o)
	}
	return vertex(c, s, t, o)
}

func bedrock(c *llm.Config, s Settings, t wire.Transport, o Options) error {
	env := cloudEnv(o.LookupEnv)
	setup, err := readAWSSetup(s.Profile, env)
	if err != nil {
		return fmt.Errorf("provider %q: %w", c.Name, err)
	}
	region := s.Region
	if region == "" {
		region = env.get("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	if region == "" {
		region = setup.values["region"]
	}
	if region == "" {
		return fmt.Errorf("provider %q: no AWS region; set its \"region\" (e.g. us-east-1) or AWS_REGION", c.Name)
	}
	key := s.APIKey
	c.KeySource = "provider." + c.Name + ".apiKey"
	if key == "" {
		if v, ok := o.LookupEnv("AWS_BEARER_TOKEN_BEDROCK"); ok && v != "" {
			key, c.KeySource = v, "AWS_BEARER_TOKEN_BEDROCK"
		}
	}
	b := &bedrockCloud{bearer: key, region: region, signer: v4.NewSigner()}
	if key == "" {
		// A Bedrock API key is a bearer token; without one, requests are
		// signed with AWS credentials (awscreds.go).
		if b.credentials, err = resolveAWSCredentials(c.Display, setup, env); err != nil {
			return err
		}
		c.KeySource = b.credentials.source
	}
	c.BaseURL = "https://bedrock-runtime." + region + ".amazonaws.com"
	if t.BaseURL != "" {
		// A configured address (a VPC endpoint, a test server) replaces
		// the region's.
		c.BaseURL = t.BaseURL
	}
	t.BaseURL = c.BaseURL
	// Bedrock takes the API version and the betas in the body.
	b.version = anthropicVersion
	if v, ok := takeHeader(t.Headers, "anthropic-version"); ok && v != "" {
		b.version = v
	}
	if v, ok := takeHeader(t.Headers, "anthropic-beta"); ok {
		for _, beta := range strings.Split(v, ",") {
			if beta = strings.TrimSpace(beta); beta != "" {
				b.betas = append(b.betas, beta)
			}
		}
	}
	c.Wire = newAnthropicWire(t, b)
	return nil
}

// bedrockCloud is Amazon Bedrock's Messages API: the model in the path
// (/model/M/invoke-with-response-stream), the API version and the betas in
// the body, a bearer token or a SigV4 signature, and the answer in AWS's
// event stream framing (bedrock_stream.go).
type bedrockCloud struct {
	// bearer is a Bedrock API key; empty signs with credentials.
	bearer      string
	credentials *awsCredentials
	region      string
	signer      *v4.Signer
	// version and betas go in the body as anthropic_version and
	// anthropic_beta.
	version string
	betas   []string
}

func (b *bedrockCloud) path(model string) string {
	return "model/" + url.PathEscape(model) + "/invoke-with-response-stream"
}

func (b *bedrockCloud) body(w *jsonWriter) {
	w.field("anthropic_version")
	w.value(b.version)
	if len(b.betas) > 0 {
		w.field("anthropic_beta")
		w.value(b.betas)
	}
}

func (b *bedrockCloud) sign(req *http.Request, body []byte) error {
	if b.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+b.bearer)
		return nil
	}
	ctx := req.Context()
	creds, err := b.credentials.retrieve(ctx)
	if err != nil {
		return err
	}
	hash := sha256.Sum256(body)
	return b.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(hash[:]), "bedrock", b.region, time.Now())
}

func (b *bedrockCloud) stream(res *http.Response) (eventSource, error) {
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/vnd.amazon.eventstream" {
		return newBedrockEvents(res.Body), nil
	}
	if err := wire.CheckEventStream(res); err != nil {
		return nil, err
	}
	return wire.NewSSEDecoder(res.Body), nil
}

func vertex(c *llm.Config, s Settings, t wire.Transport, o Options) error {
	env := cloudEnv(o.LookupEnv)
	region := s.Region
	if region == "" {
		region = env.get("CLOUD_ML_REGION")
	}
	if region == "" {
		region = "global"
	}
	project := s.Project
	if project == "" {
		project = env.get("ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT")
	}
	if project == "" {
		return fmt.Errorf("provider %q: no Google Cloud project; set its \"project\" or ANTHROPIC_VERTEX_PROJECT_ID", c.Name)
	}
	var creds *gcpCredentials
	if s.APIKey != "" {
		// An access token given as the key (gcloud auth print-access-token).
		c.KeySource = "provider." + c.Name + ".apiKey"
		creds = staticGCPCredentials(c.KeySource, s.APIKey)
	} else {
		// Application default credentials (gcpcreds.go).
		var err error
		if creds, err = resolveGCPCredentials(c.Display, env, o.HTTPClient, gcpProductFile); err != nil {
			return err
		}
		c.KeySource = creds.source
	}
	switch region {
	case "global":
		c.BaseURL = "https://aiplatform.googleapis.com"
	case "us", "eu":
		c.BaseURL = "https://aiplatform." + region + ".rep.googleapis.com"
	default:
		c.BaseURL = "https://" + region + "-aiplatform.googleapis.com"
	}
	if t.BaseURL != "" {
		c.BaseURL = t.BaseURL
	}
	t.BaseURL = c.BaseURL
	// Vertex takes its own API version, in the body.
	takeHeader(t.Headers, "anthropic-version")
	c.Wire = newAnthropicWire(t, &vertexCloud{project: project, region: region, credentials: creds})
	return nil
}

// vertexCloud is Vertex AI's Messages API: the model in the path
// (/v1/projects/P/locations/R/publishers/anthropic/models/M:streamRawPredict),
// the API version in the body as anthropic_version, and a Google access
// token.
type vertexCloud struct {
	project, region string
	credentials     *gcpCredentials
}

func (v *vertexCloud) path(model string) string {
	return fmt.Sprintf("v1/projects/%s/locations/%s/publishers/anthropic/models/%s:streamRawPredict",
		url.PathEscape(v.project), url.PathEscape(v.region), url.PathEscape(model))
}

func (v *vertexCloud) body(w *jsonWriter) {
	w.b.WriteString(`,"stream":true`)
	w.field("anthropic_version")
	w.value(vertexAnthropicVersion)
}

func (v *vertexCloud) sign(req *http.Request, _ []byte) error {
	tok, err := v.credentials.token(req.Context())
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Del("X-Api-Key")
	return nil
}

func (v *vertexCloud) stream(res *http.Response) (eventSource, error) {
	if err := wire.CheckEventStream(res); err != nil {
		return nil, err
	}
	return wire.NewSSEDecoder(res.Body), nil
}
