package provider

import (
	"fmt"
	"time"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/anthropic"
	"github.com/darman-dev/darman/agent/llm/cloudcreds"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
)

// Claude on Amazon Bedrock and Google Vertex AI: where the region, the
// project and the credentials come from (agent/llm/anthropic speaks the
// API behind them).

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
	env := cloudcreds.Env(o.LookupEnv)
	setup, err := cloudcreds.ReadAWSSetup(s.Profile, env)
	if err != nil {
		return fmt.Errorf("provider %q: %w", c.Name, err)
	}
	region := s.Region
	if region == "" {
		region = env.Get("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	if region == "" {
		region = setup.Values["region"]
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
	b := anthropic.Bedrock{Region: region, Bearer: key}
	if key == "" {
		// A Bedrock API key is a bearer token; without one, requests are
		// signed with AWS credentials (agent/llm/cloudcreds).
		creds, err := cloudcreds.ResolveAWS(c.Display, setup, env)
		if err != nil {
			return err
		}
		b.Credentials, c.KeySource = creds, creds.Source
	}
	c.BaseURL = "https://bedrock-runtime." + region + ".amazonaws.com"
	if t.BaseURL != "" {
		// A configured address (a VPC endpoint, a test server) replaces
		// the region's.
		c.BaseURL = t.BaseURL
	}
	t.BaseURL = c.BaseURL
	c.Wire = anthropic.NewBedrock(t, b)
	return nil
}

func vertex(c *llm.Config, s Settings, t wire.Transport, o Options) error {
	env := cloudcreds.Env(o.LookupEnv)
	region := s.Region
	if region == "" {
		region = env.Get("CLOUD_ML_REGION")
	}
	if region == "" {
		region = "global"
	}
	project := s.Project
	if project == "" {
		project = env.Get("ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT")
	}
	if project == "" {
		return fmt.Errorf("provider %q: no Google Cloud project; set its \"project\" or ANTHROPIC_VERTEX_PROJECT_ID", c.Name)
	}
	var creds *cloudcreds.GCP
	if s.APIKey != "" {
		// An access token given as the key (gcloud auth print-access-token).
		c.KeySource = "provider." + c.Name + ".apiKey"
		creds = cloudcreds.StaticGCP(c.KeySource, s.APIKey)
	} else {
		// Application default credentials (agent/llm/cloudcreds).
		var err error
		if creds, err = cloudcreds.ResolveGCP(c.Display, env, o.HTTPClient, cloudcreds.ProductFile); err != nil {
			return err
		}
		c.KeySource = creds.Source
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
	c.Wire = anthropic.NewVertex(t, project, region, creds)
	return nil
}
