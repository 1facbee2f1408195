package anthropic

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
)

// Claude on Amazon Bedrock and Google Vertex AI speaks Anthropic's Messages
// API behind a cloud's own addresses and credentials.
//
// darman's Messages client (anthropic.go) adapts its requests to both, as
// the Anthropic SDK's bedrock middleware did: for Bedrock it signs with
// aws-sdk-go-v2's SigV4 signer and credentials darman finds itself
// (agent/llm/cloudcreds: the environment, the profile's keys or credential_process,
// else the AWS CLI v2 for SSO and roles), and reads the AWS event stream
// framing with aws-sdk-go-v2's decoder. For Vertex it sends a Google
// access token that darman gets itself (agent/llm/cloudcreds: the application
// default credentials' files and metadata server, else gcloud). The SDK's
// vertex package was never used: it pulls Google's API transport (gRPC,
// OpenCensus, OpenTelemetry), 35 MB of binary for an OAuth token and a URL.

// vertexAnthropicVersion is the API version Vertex AI wants in the body.
const vertexAnthropicVersion = "vertex-2023-10-16"

// AWSCredentials are the AWS keys Bedrock's requests are signed with.
// Retrieve may be called from several goroutines at once; it refreshes
// what expires.
type AWSCredentials interface {
	Retrieve(ctx context.Context) (aws.Credentials, error)
}

// Bedrock is how Claude on Amazon Bedrock is reached.
type Bedrock struct {
	// Region is the AWS region requests are signed for.
	Region string
	// Bearer is a Bedrock API key; empty signs each request with
	// Credentials.
	Bearer      string
	Credentials AWSCredentials
}

// NewBedrock is the wire of Claude on Amazon Bedrock at t's base URL. The
// API version and the betas travel in the body: it takes them out of t's
// headers (anthropic-version, anthropic-beta).
func NewBedrock(t wire.Transport, b Bedrock) llm.Wire {
	c := &bedrockCloud{bearer: b.Bearer, credentials: b.Credentials, region: b.Region, signer: v4.NewSigner()}
	c.version = apiVersion
	if v, ok := takeHeader(t.Headers, "anthropic-version"); ok && v != "" {
		c.version = v
	}
	if v, ok := takeHeader(t.Headers, "anthropic-beta"); ok {
		for _, beta := range strings.Split(v, ",") {
			if beta = strings.TrimSpace(beta); beta != "" {
				c.betas = append(c.betas, beta)
			}
		}
	}
	return newWire(t, c)
}

// bedrockCloud is Amazon Bedrock's Messages API: the model in the path
// (/model/M/invoke-with-response-stream), the API version and the betas in
// the body, a bearer token or a SigV4 signature, and the answer in AWS's
// event stream framing (bedrock_stream.go).
type bedrockCloud struct {
	// bearer is a Bedrock API key; empty signs with credentials.
	bearer      string
	credentials AWSCredentials
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
	creds, err := b.credentials.Retrieve(ctx)
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

// GoogleToken gives the Google access token of Vertex AI's requests.
// Token may be called from several goroutines at once; it refreshes what
// expires.
type GoogleToken interface {
	Token(ctx context.Context) (string, error)
}

// NewVertex is the wire of Claude on Vertex AI in project and region at
// t's base URL. Vertex takes its own API version, in the body: a
// configured anthropic-version header is dropped.
func NewVertex(t wire.Transport, project, region string, token GoogleToken) llm.Wire {
	takeHeader(t.Headers, "anthropic-version")
	return newWire(t, &vertexCloud{project: project, region: region, credentials: token})
}

// vertexCloud is Vertex AI's Messages API: the model in the path
// (/v1/projects/P/locations/R/publishers/anthropic/models/M:streamRawPredict),
// the API version in the body as anthropic_version, and a Google access
// token.
type vertexCloud struct {
	project, region string
	credentials     GoogleToken
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
	tok, err := v.credentials.Token(req.Context())
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
