package cloudcreds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/darman-dev/darman/agent/llm"
)

// darman finds Bedrock's AWS credentials itself, in this order:
//
//  1. a Bedrock API key (the provider's apiKey, AWS_BEARER_TOKEN_BEDROCK),
//     which agent/llm/anthropic sends as a bearer token without signing;
//  2. AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN;
//  3. static keys of the selected profile in the shared credentials or
//     config file;
//  4. the profile's credential_process;
//  5. the AWS CLI v2: `aws configure export-credentials --format process`,
//     which covers SSO, assume-role, web identity, and the instance and
//     container roles with the official implementation.
//
// aws-sdk-go-v2/config did all of this in-process, but at a price paid by
// every start of darman, Bedrock or not: its STS, SSO, SSO-OIDC and signin
// clients build their endpoint tables in their package initialisers (about
// 1 ms and 2.7 MB of binary). Those who use SSO or assume-role profiles have
// the AWS CLI already (`aws sso login`).

// awsCredentialWindow is how long before their expiry credentials are
// fetched again: a request signed with them must not reach AWS after they
// expire.
const awsCredentialWindow = 5 * time.Minute

// awsProcessTimeout bounds a credential_process or the AWS CLI (which may
// need the network, for SSO or STS).
const awsProcessTimeout = time.Minute

// AWSSetup is what darman read of the AWS configuration when the provider
// was built.
type AWSSetup struct {
	// profile is the selected profile; named says whether it was chosen
	// (the provider's profile, AWS_PROFILE) rather than "default".
	profile string
	named   bool
	// configFile and credentialsFile are the shared files' paths; empty
	// when there is no home directory to find them in.
	configFile, credentialsFile string
	// Values are the profile's settings, the credentials file's over the
	// config file's.
	Values map[string]string
	// tried says what was looked at, for the error when nothing answers.
	tried []string
}

// Env reads environment variables: the first of names that is set and
// not empty.
type Env func(string) (string, bool)

func (env Env) Get(names ...string) string {
	for _, n := range names {
		if v, ok := env(n); ok && v != "" {
			return v
		}
	}
	return ""
}

// ReadAWSSetup selects the profile and reads its settings from the shared
// files, as the AWS CLI and SDKs do. A missing file is no error; one that
// cannot be read is.
func ReadAWSSetup(profile string, env Env) (*AWSSetup, error) {
	s := &AWSSetup{profile: profile, named: profile != ""}
	if s.profile == "" {
		s.profile = env.Get("AWS_PROFILE", "AWS_DEFAULT_PROFILE")
		s.named = s.profile != ""
	}
	if s.profile == "" {
		s.profile = "default"
	}
	home := env.Get("HOME")
	if runtime.GOOS == "windows" {
		home = env.Get("USERPROFILE", "HOME")
	}
	file := func(name, dflt string) string {
		p := env.Get(name)
		if p == "" && home != "" {
			p = filepath.Join(home, ".aws", dflt)
		}
		if rest, ok := strings.CutPrefix(p, "~"+string(filepath.Separator)); ok && home != "" {
			p = filepath.Join(home, rest)
		}
		return p
	}
	s.configFile = file("AWS_CONFIG_FILE", "config")
	s.credentialsFile = file("AWS_SHARED_CREDENTIALS_FILE", "credentials")
	s.Values = map[string]string{}
	// In the config file a profile other than the default is
	// [profile NAME]; in the credentials file it is [NAME].
	section := "profile " + s.profile
	for _, f := range []struct{ path, section string }{
		{s.configFile, section},
		{s.credentialsFile, s.profile},
	} {
		if f.path == "" {
			continue
		}
		values, found, err := readAWSProfile(f.path, f.section, s.profile == "default")
		if err != nil {
			return nil, err
		}
		if found {
			for k, v := range values {
				s.Values[k] = v
			}
		}
	}
	return s, nil
}

// readAWSProfile reads one section of an AWS shared file (an INI file:
// [section], key = value, comment lines starting with # or ;). Indented
// lines, the nested settings of a service, are skipped. isDefault also
// accepts [default] in the config file.
func readAWSProfile(path, section string, isDefault bool) (map[string]string, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the AWS configuration: %w", err)
	}
	var values map[string]string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			continue
		}
		if trimmed[0] == '[' {
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(trimmed, "["), "]"))
			name = strings.Join(strings.Fields(name), " ")
			in = name == section || (isDefault && name == "default")
			if in && values == nil {
				values = map[string]string{}
			}
			continue
		}
		if !in || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		k, v, ok := strings.Cut(trimmed, "=")
		if !ok {
			continue
		}
		values[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	return values, values != nil, nil
}

// awsDelegated are the profile settings whose credentials only the AWS
// CLI gets: a role to assume, SSO, web identity, a credential source.
var awsDelegated = []string{"role_arn", "source_profile", "credential_source", "web_identity_token_file",
	"sso_session", "sso_start_url", "sso_account_id", "sso_role_name", "login_session"}

// AWS gives the credentials Bedrock's requests are signed
// with, and fetches them again before they expire. It is safe for
// concurrent use; callers wait while one fetches.
type AWS struct {
	// provider is the provider's display name, for errors.
	provider string
	// Source names where the credentials come from, for messages.
	Source string
	// fetch gets fresh credentials; nil for static ones.
	fetch func(ctx context.Context) (aws.Credentials, error)

	mu     sync.Mutex
	cached aws.Credentials
	have   bool
}

// ResolveAWS picks the first source of the chain above, after
// the API key, that has credentials. It runs nothing: a process or the AWS
// CLI runs when the first request is signed. The error says what was tried
// and what to do.
func ResolveAWS(provider string, s *AWSSetup, env Env) (*AWS, error) {
	id, secret := env.Get("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY"), env.Get("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY")
	switch {
	case id != "" && secret != "":
		return staticAWSCredentials("AWS_ACCESS_KEY_ID", aws.Credentials{AccessKeyID: id, SecretAccessKey: secret,
			SessionToken: env.Get("AWS_SESSION_TOKEN"), Source: "environment"}), nil
	case id != "":
		s.tried = append(s.tried, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
	case secret != "":
		s.tried = append(s.tried, "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not")
	default:
		s.tried = append(s.tried, "no AWS_ACCESS_KEY_ID in the environment")
	}

	profile := fmt.Sprintf("AWS profile %q", s.profile)
	delegated := ""
	for _, k := range awsDelegated {
		if s.Values[k] != "" {
			delegated = k
			break
		}
	}
	id, secret = s.Values["aws_access_key_id"], s.Values["aws_secret_access_key"]
	switch {
	case len(s.Values) == 0 && s.configFile == "":
		s.tried = append(s.tried, "no home directory to find ~/.aws/config in")
	case len(s.Values) == 0:
		s.tried = append(s.tried, fmt.Sprintf("no %s in %s or %s", profile, s.configFile, s.credentialsFile))
	case delegated != "":
		// A role or SSO: the keys of the profile, if any, are the source
		// of a role the CLI assumes.
	case id != "" && secret != "":
		return staticAWSCredentials(profile, aws.Credentials{AccessKeyID: id, SecretAccessKey: secret,
			SessionToken: s.Values["aws_session_token"], Source: "shared files"}), nil
	case s.Values["credential_process"] != "":
		argv := shellCommand(s.Values["credential_process"])
		return &AWS{provider: provider, Source: "the credential_process of " + profile, fetch: func(ctx context.Context) (aws.Credentials, error) {
			return runAWSProcess(ctx, s, argv)
		}}, nil
	default:
		s.tried = append(s.tried, fmt.Sprintf("%s has no keys and no credential_process", profile))
	}

	awsPath, err := exec.LookPath("aws")
	if err != nil {
		s.tried = append(s.tried, "the AWS CLI: no aws on PATH")
		what := "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, put keys or a credential_process in the profile, or set AWS_BEARER_TOKEN_BEDROCK" +
			"; for SSO, assume-role or an instance role install the AWS CLI v2 (https://aws.amazon.com/cli/) and run `aws sso login` or `aws configure`"
		if delegated != "" {
			what = fmt.Sprintf("%s uses %s, which darman reads through the AWS CLI v2: install it (https://aws.amazon.com/cli/), then run `aws sso login --profile %s` for an SSO profile",
				profile, delegated, s.profile)
		}
		return nil, &llm.Error{Kind: llm.ErrMissingKey, Provider: provider,
			Message: "no AWS credentials (tried: " + strings.Join(s.tried, "; ") + "); " + what}
	}
	args := []string{"configure", "export-credentials", "--format", "process"}
	if s.named {
		args = []string{"configure", "export-credentials", "--profile", s.profile, "--format", "process"}
	}
	what := "the AWS CLI (aws " + strings.Join(args, " ") + ")"
	return &AWS{provider: provider, Source: what, fetch: func(ctx context.Context) (aws.Credentials, error) {
		return runAWSProcess(ctx, s, append([]string{awsPath}, args...))
	}}, nil
}

func staticAWSCredentials(source string, c aws.Credentials) *AWS {
	return &AWS{Source: source, cached: c, have: true}
}

// shellCommand runs a credential_process as the AWS SDK for Go did: by
// the shell.
func shellCommand(command string) []string {
	if runtime.GOOS == "windows" {
		return []string{"cmd.exe", "/C", command}
	}
	return []string{"sh", "-c", command}
}

// Retrieve gives credentials that are valid for awsCredentialWindow more,
// fetching them when the cached ones are not.
func (a *AWS) Retrieve(ctx context.Context) (aws.Credentials, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.have && (!a.cached.CanExpire || time.Now().Add(awsCredentialWindow).Before(a.cached.Expires)) {
		return a.cached, nil
	}
	c, err := a.fetch(ctx)
	if err != nil && ctx.Err() != nil {
		// The call was cancelled while the process ran.
		return aws.Credentials{}, context.Cause(ctx)
	}
	if err == nil && c.CanExpire && !time.Now().Before(c.Expires) {
		err = fmt.Errorf("gave credentials that expired at %s; it must give fresh ones", c.Expires.UTC().Format(time.RFC3339))
	}
	if err != nil {
		return aws.Credentials{}, &llm.Error{Kind: llm.ErrMissingKey, Provider: a.provider, KeySource: a.Source,
			Message: a.Source + " " + err.Error()}
	}
	a.cached, a.have = c, true
	return c, nil
}

// awsProcessOutput is the JSON a credential_process prints, and the AWS
// CLI's export-credentials with --format process:
// https://docs.aws.amazon.com/cli/v1/userguide/cli-configure-sourcing-external.html
type awsProcessOutput struct {
	Version         int
	AccessKeyID     string `json:"AccessKeyId"`
	SecretAccessKey string
	SessionToken    string
	Expiration      string
}

// runAWSProcess runs a credential_process or the AWS CLI, with the shared
// files darman read named in its environment, and reads the credentials it
// prints. Its error completes a sentence that names the process.
func runAWSProcess(ctx context.Context, s *AWSSetup, argv []string) (aws.Credentials, error) {
	var env []string
	if s.configFile != "" {
		env = append(env, "AWS_CONFIG_FILE="+s.configFile)
	}
	if s.credentialsFile != "" {
		env = append(env, "AWS_SHARED_CREDENTIALS_FILE="+s.credentialsFile)
	}
	stdout, said, err := runCredentialHelper(ctx, "AWS credentials", argv, env, awsProcessTimeout)
	if err != nil {
		msg := err.Error()
		switch said = strings.ToLower(said); {
		case strings.Contains(said, "invalid choice"):
			msg += "; export-credentials needs the AWS CLI v2 (https://aws.amazon.com/cli/), and this one is older"
		case strings.Contains(said, "sso"):
			msg += fmt.Sprintf("; run `aws sso login --profile %s`", s.profile)
		}
		return aws.Credentials{}, errors.New(msg)
	}
	var out awsProcessOutput
	if err := json.Unmarshal(stdout, &out); err != nil {
		return aws.Credentials{}, fmt.Errorf("printed no credential JSON (%v)", err)
	}
	switch {
	case out.Version != 1:
		return aws.Credentials{}, fmt.Errorf("printed credentials of Version %d; darman reads Version 1", out.Version)
	case out.AccessKeyID == "" || out.SecretAccessKey == "":
		return aws.Credentials{}, errors.New("printed no AccessKeyId or no SecretAccessKey")
	}
	c := aws.Credentials{AccessKeyID: out.AccessKeyID, SecretAccessKey: out.SecretAccessKey, SessionToken: out.SessionToken}
	if out.Expiration != "" {
		t, err := time.Parse(time.RFC3339, out.Expiration)
		if err != nil {
			return aws.Credentials{}, fmt.Errorf("printed an Expiration that is not an RFC 3339 time: %q", out.Expiration)
		}
		c.CanExpire, c.Expires = true, t
	}
	return c, nil
}
