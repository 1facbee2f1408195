//go:build unix

package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/darman-dev/darman/agent/llm"
)

// bedrockTarget is a Bedrock server that records what it receives.
type bedrockTarget struct {
	url  string
	sent []sentRequest
}

func newBedrockTarget(t *testing.T) *bedrockTarget {
	t.Helper()
	b := &bedrockTarget{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.sent = append(b.sent, sentRequest{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header, host: r.Host, body: body})
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	t.Cleanup(srv.Close)
	b.url = srv.URL
	return b
}

// client is a bedrock provider against the server, with the environment
// env and nothing else of the process's (its PATH apart, which finds aws).
func (b *bedrockTarget) client(s Settings, env map[string]string) (*llm.Client, error) {
	s.Name, s.BaseURL = "bedrock", b.url
	return New(s, &Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Retry: llm.RetryPolicy{MaxAttempts: 1}})
}

// send makes one call; it returns the request the server received, if it
// received one.
func (b *bedrockTarget) send(t *testing.T, c *llm.Client) (*sentRequest, error) {
	t.Helper()
	n := len(b.sent)
	_, err := llm.Collect(c.Stream(context.Background(), &llm.Request{Model: "anthropic.claude-haiku-4-5-20251001-v1:0",
		Messages: []llm.Message{llm.UserText("hi")}}))
	if len(b.sent) == n {
		return nil, err
	}
	return &b.sent[len(b.sent)-1], err
}

// mustSign sends one call and checks that the server got it signed by
// SigV4 with creds for region.
func (b *bedrockTarget) mustSign(t *testing.T, c *llm.Client, creds aws.Credentials, region string) {
	t.Helper()
	got, err := b.send(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("the server received nothing")
	}
	checkSigned(t, *got, creds, region)
}

// mustFail sends one call and checks that nothing went out and that the
// error, about Bedrock's credentials, contains want.
func (b *bedrockTarget) mustFail(t *testing.T, c *llm.Client, want string) {
	t.Helper()
	got, err := b.send(t, c)
	if got != nil {
		t.Fatalf("a request went out, signed %s", got.Header.Get("Authorization"))
	}
	if err == nil || !strings.HasPrefix(err.Error(), "no API key for Amazon Bedrock: ") || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v\nwant it to contain %q", err, want)
	}
}

// checkSigned checks that a request carries the SigV4 signature of creds
// for region, as aws-sdk-go-v2's signer makes it.
func checkSigned(t *testing.T, got sentRequest, creds aws.Credentials, region string) {
	t.Helper()
	auth := got.Header.Get("Authorization")
	scope := "Credential=" + creds.AccessKeyID + "/" + got.Header.Get("X-Amz-Date")[:8] + "/" + region + "/bedrock/aws4_request"
	if !strings.Contains(auth, scope) {
		t.Fatalf("Authorization %q, want the scope %s", auth, scope)
	}
	_, headers, _ := strings.Cut(auth, "SignedHeaders=")
	headers, _, _ = strings.Cut(headers, ",")
	if want := sigV4(t, got, headers, creds, region); want != auth {
		t.Errorf("the signature is not SigV4's for the request as received:\n got %s\nwant %s", auth, want)
	}
	if v := got.Header.Get("X-Amz-Security-Token"); v != creds.SessionToken {
		t.Errorf("X-Amz-Security-Token %q, want %q", v, creds.SessionToken)
	}
}

func writeFile(t *testing.T, path, text string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// noAWSCLI takes every directory that has an aws out of PATH.
func noAWSCLI(t *testing.T) {
	t.Setenv("PATH", pathWithoutAWS())
}

func pathWithoutAWS() string {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "aws")); err != nil {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// The environment's keys come first, before any profile's.
func TestBedrockCredentialsFromTheEnvironment(t *testing.T) {
	noAWSCLI(t)
	home := t.TempDir()
	writeFile(t, home+"/.aws/credentials", "[default]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = profile-secret\n", 0o600)
	b := newBedrockTarget(t)
	creds := aws.Credentials{AccessKeyID: "AKIDENV", SecretAccessKey: "env-secret", SessionToken: "env-token"}
	for _, names := range [][2]string{{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}, {"AWS_ACCESS_KEY", "AWS_SECRET_KEY"}} {
		c, err := b.client(Settings{Region: "us-east-2"}, map[string]string{"HOME": home,
			names[0]: creds.AccessKeyID, names[1]: creds.SecretAccessKey, "AWS_SESSION_TOKEN": creds.SessionToken})
		if err != nil {
			t.Fatal(err)
		}
		b.mustSign(t, c, creds, "us-east-2")
	}
}

// A profile's static keys, from the credentials file or the config file,
// and its region: the profile chosen by the provider's profile, else
// AWS_PROFILE, else "default"; the files where AWS_CONFIG_FILE and
// AWS_SHARED_CREDENTIALS_FILE say, else in ~/.aws.
func TestBedrockCredentialsFromAProfile(t *testing.T) {
	noAWSCLI(t)
	home := t.TempDir()
	writeFile(t, home+"/.aws/config", `# darman's test
[default]
region = eu-north-1

[profile dev]
region = ap-south-1
s3 =
  max_concurrent_requests = 10
[profile  cfg]
aws_access_key_id=AKIDCONFIG
aws_secret_access_key=config-secret
`, 0o600)
	writeFile(t, home+"/.aws/credentials", "[default]\r\naws_access_key_id = AKIDDEFAULT\r\naws_secret_access_key = default-secret\r\n"+
		"[dev]\n; keys of dev\nAWS_Access_Key_ID = AKIDDEV\naws_secret_access_key = dev-secret\naws_session_token = dev-token\n", 0o600)
	other := t.TempDir()
	writeFile(t, other+"/conf", "[profile elsewhere]\nregion = sa-east-1\n", 0o600)
	writeFile(t, other+"/creds", "[elsewhere]\naws_access_key_id = AKIDELSEWHERE\naws_secret_access_key = elsewhere-secret\n", 0o600)

	b := newBedrockTarget(t)
	for _, c := range []struct {
		name     string
		settings Settings
		env      map[string]string
		creds    aws.Credentials
		region   string
	}{
		{"default", Settings{}, map[string]string{"HOME": home},
			aws.Credentials{AccessKeyID: "AKIDDEFAULT", SecretAccessKey: "default-secret"}, "eu-north-1"},
		{"AWS_PROFILE", Settings{}, map[string]string{"HOME": home, "AWS_PROFILE": "dev"},
			aws.Credentials{AccessKeyID: "AKIDDEV", SecretAccessKey: "dev-secret", SessionToken: "dev-token"}, "ap-south-1"},
		{"the provider's profile over AWS_PROFILE", Settings{Profile: "dev"}, map[string]string{"HOME": home, "AWS_PROFILE": "cfg"},
			aws.Credentials{AccessKeyID: "AKIDDEV", SecretAccessKey: "dev-secret", SessionToken: "dev-token"}, "ap-south-1"},
		{"keys in the config file", Settings{Profile: "cfg", Region: "us-west-1"}, map[string]string{"HOME": home},
			aws.Credentials{AccessKeyID: "AKIDCONFIG", SecretAccessKey: "config-secret"}, "us-west-1"},
		{"AWS_REGION over the profile's", Settings{}, map[string]string{"HOME": home, "AWS_REGION": "ca-central-1", "AWS_DEFAULT_REGION": "me-south-1"},
			aws.Credentials{AccessKeyID: "AKIDDEFAULT", SecretAccessKey: "default-secret"}, "ca-central-1"},
		{"AWS_DEFAULT_REGION", Settings{}, map[string]string{"HOME": home, "AWS_DEFAULT_REGION": "me-south-1"},
			aws.Credentials{AccessKeyID: "AKIDDEFAULT", SecretAccessKey: "default-secret"}, "me-south-1"},
		{"AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE", Settings{},
			map[string]string{"HOME": home, "AWS_PROFILE": "elsewhere", "AWS_CONFIG_FILE": other + "/conf", "AWS_SHARED_CREDENTIALS_FILE": other + "/creds"},
			aws.Credentials{AccessKeyID: "AKIDELSEWHERE", SecretAccessKey: "elsewhere-secret"}, "sa-east-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := b.client(c.settings, c.env)
			if err != nil {
				t.Fatal(err)
			}
			b.mustSign(t, cl, c.creds, c.region)
		})
	}
}

// credentialProcess writes a credential_process that prints, on its Nth
// run, the Nth of outputs, and counts its runs in a file.
func credentialProcess(t *testing.T, dir string, outputs ...string) (script, runs string) {
	t.Helper()
	runs = dir + "/runs"
	var cases strings.Builder
	for i, out := range outputs {
		fmt.Fprintf(&cases, "%d) cat <<'EOF'\n%s\nEOF\n;;\n", i+1, out)
	}
	script = writeFile(t, dir+"/creds.sh", `#!/bin/sh
n=$(( $(cat "`+runs+`" 2>/dev/null || echo 0) + 1 ))
echo $n >"`+runs+`"
case $n in
`+cases.String()+`*) echo "run $n: no more credentials" >&2; exit 3 ;;
esac
`, 0o755)
	return script, runs
}

func processJSON(id string, expires time.Time) string {
	return fmt.Sprintf(`{"Version": 1, "AccessKeyId": %q, "SecretAccessKey": "secret-%s", "SessionToken": "token-%s", "Expiration": %q}`,
		id, id, id, expires.UTC().Format(time.RFC3339))
}

func countRuns(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(string(data), &n)
	return n
}

// A profile's credential_process runs when the first request is signed,
// and again only when its credentials are about to expire. Credentials
// that have expired already are refused, with the process named.
func TestBedrockCredentialProcess(t *testing.T) {
	noAWSCLI(t)
	dir := t.TempDir()
	now := time.Now()
	script, runs := credentialProcess(t, dir,
		processJSON("AKIDPAST", now.Add(-time.Hour)),
		processJSON("AKIDSOON", now.Add(time.Minute)),
		processJSON("AKIDLATER", now.Add(time.Hour)),
	)
	writeFile(t, dir+"/config", "[profile proc]\nregion = eu-west-3\ncredential_process = "+script+" --flag\n", 0o600)
	b := newBedrockTarget(t)
	c, err := b.client(Settings{}, map[string]string{"AWS_PROFILE": "proc", "AWS_CONFIG_FILE": dir + "/config"})
	if err != nil {
		t.Fatal(err)
	}
	if n := countRuns(t, runs); n != 0 {
		t.Fatalf("the process ran %d times before any request", n)
	}

	b.mustFail(t, c, `the credential_process of AWS profile "proc" gave credentials that expired at `)

	// Valid for a minute: used, but fetched again for the next request,
	// which could outlive them.
	b.mustSign(t, c, aws.Credentials{AccessKeyID: "AKIDSOON", SecretAccessKey: "secret-AKIDSOON", SessionToken: "token-AKIDSOON"}, "eu-west-3")
	later := aws.Credentials{AccessKeyID: "AKIDLATER", SecretAccessKey: "secret-AKIDLATER", SessionToken: "token-AKIDLATER"}
	b.mustSign(t, c, later, "eu-west-3")
	b.mustSign(t, c, later, "eu-west-3")
	if n := countRuns(t, runs); n != 3 {
		t.Errorf("the process ran %d times, want 3 (the last credentials are cached)", n)
	}
}

// A process that fails, or prints something else than the credential
// JSON, fails the request with what it said.
func TestBedrockCredentialProcessFails(t *testing.T) {
	noAWSCLI(t)
	dir := t.TempDir()
	for _, c := range []struct{ name, script, want string }{
		{"exit", "echo usage >&2\necho 'token expired: log in again' >&2\nexit 4", `the credential_process of AWS profile "p" failed (exit status 4): usage token expired: log in again`},
		{"not JSON", "echo hello", `the credential_process of AWS profile "p" printed no credential JSON`},
		{"version", `echo '{"Version": 2, "AccessKeyId": "a", "SecretAccessKey": "b"}'`, "printed credentials of Version 2; darman reads Version 1"},
		{"no secret", `echo '{"Version": 1, "AccessKeyId": "a"}'`, "printed no AccessKeyId or no SecretAccessKey"},
		{"bad expiration", `echo '{"Version": 1, "AccessKeyId": "a", "SecretAccessKey": "b", "Expiration": "tomorrow"}'`, `printed an Expiration that is not an RFC 3339 time: "tomorrow"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := writeFile(t, dir+"/"+strings.ReplaceAll(c.name, " ", "-")+".sh", "#!/bin/sh\n"+c.script+"\n", 0o755)
			writeFile(t, dir+"/config", "[default]\nregion = eu-west-3\n[profile p]\ncredential_process = "+script+"\n", 0o600)
			b := newBedrockTarget(t)
			cl, err := b.client(Settings{Profile: "p", Region: "eu-west-3"}, map[string]string{"AWS_CONFIG_FILE": dir + "/config"})
			if err != nil {
				t.Fatal(err)
			}
			b.mustFail(t, cl, c.want)
		})
	}
}

// A call cancelled while its credential_process runs ends as cancelled,
// and the process is stopped.
func TestBedrockCredentialProcessCancelled(t *testing.T) {
	noAWSCLI(t)
	dir := t.TempDir()
	script := writeFile(t, dir+"/slow.sh", "#!/bin/sh\necho $$ >\""+dir+"/pid\"\nexec sleep 30\n", 0o755)
	writeFile(t, dir+"/config", "[default]\ncredential_process = "+script+"\n", 0o600)
	b := newBedrockTarget(t)
	c, err := b.client(Settings{Region: "eu-west-3"}, map[string]string{"AWS_CONFIG_FILE": dir + "/config"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for readText(t, dir+"/pid") == "" {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	_, err = llm.Collect(c.Stream(ctx, &llm.Request{Model: "anthropic.claude-haiku-4-5-20251001-v1:0", Messages: []llm.Message{llm.UserText("hi")}}))
	if !errors.Is(err, llm.ErrCanceled) {
		t.Fatalf("error %v, want it cancelled", err)
	}
	if len(b.sent) != 0 {
		t.Error("a request went out")
	}
	var pid int
	fmt.Sscan(readText(t, dir+"/pid"), &pid)
	if running(pid) {
		t.Errorf("the credential_process (pid %d) still runs", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// running reports whether a process runs: exists and is not a zombie
// (one killed with its parent waits for init to reap it).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		_, rest, _ := strings.Cut(string(stat), ") ")
		return !strings.HasPrefix(rest, "Z")
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		return false // no such process
	}
	return syscall.Kill(pid, 0) == nil
}

// fakeAWSCLI puts on PATH an aws that records its arguments and the
// shared files it was told of, then runs body.
func fakeAWSCLI(t *testing.T, body string) (args string) {
	t.Helper()
	bin := t.TempDir()
	args = bin + "/args"
	writeFile(t, bin+"/aws", `#!/bin/sh
echo "$*" >>"`+args+`"
echo "AWS_CONFIG_FILE=$AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE=$AWS_SHARED_CREDENTIALS_FILE" >>"`+args+`"
`+body+"\n", 0o755)
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+pathWithoutAWS())
	return args
}

func readText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

// SSO, roles and everything else go to the AWS CLI v2's
// export-credentials, for the selected profile and the files darman read:
// a profile that assumes a role is the CLI's even when it has keys of its
// own.
func TestBedrockCredentialsFromTheAWSCLI(t *testing.T) {
	dir := t.TempDir()
	expires := time.Now().Add(time.Hour)
	args := fakeAWSCLI(t, "echo '"+processJSON("AKIDCLI", expires)+"'")
	writeFile(t, dir+"/config", `[profile sso]
sso_session = corp
sso_account_id = 111122223333
sso_role_name = Dev
region = us-east-1
[sso-session corp]
sso_start_url = https://corp.awsapps.com/start
[profile role]
role_arn = arn:aws:iam::111122223333:role/Bedrock
source_profile = role
`, 0o600)
	writeFile(t, dir+"/credentials", "[role]\naws_access_key_id = AKIDSOURCE\naws_secret_access_key = source-secret\n", 0o600)
	env := map[string]string{"AWS_CONFIG_FILE": dir + "/config", "AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials"}
	files := "AWS_CONFIG_FILE=" + dir + "/config AWS_SHARED_CREDENTIALS_FILE=" + dir + "/credentials"
	cli := aws.Credentials{AccessKeyID: "AKIDCLI", SecretAccessKey: "secret-AKIDCLI", SessionToken: "token-AKIDCLI"}
	b := newBedrockTarget(t)

	for _, profile := range []string{"sso", "role"} {
		os.Remove(args)
		c, err := b.client(Settings{Profile: profile, Region: "us-east-1"}, env)
		if err != nil {
			t.Fatal(err)
		}
		if c.KeySource() != "the AWS CLI (aws configure export-credentials --profile "+profile+" --format process)" {
			t.Errorf("key source %q", c.KeySource())
		}
		b.mustSign(t, c, cli, "us-east-1")
		b.mustSign(t, c, cli, "us-east-1")
		want := "configure export-credentials --profile " + profile + " --format process\n" + files + "\n"
		if got := readText(t, args); got != want {
			t.Errorf("the AWS CLI ran as\n%s\nwant once, as\n%s", got, want)
		}
	}

	// No profile named and none in the files (an instance role, say): the
	// CLI's own default, without --profile.
	os.Remove(args)
	home := t.TempDir()
	c, err := b.client(Settings{Region: "us-east-1"}, map[string]string{"HOME": home})
	if err != nil {
		t.Fatal(err)
	}
	b.mustSign(t, c, cli, "us-east-1")
	want := "configure export-credentials --format process\nAWS_CONFIG_FILE=" + home + "/.aws/config AWS_SHARED_CREDENTIALS_FILE=" + home + "/.aws/credentials\n"
	if got := readText(t, args); got != want {
		t.Errorf("the AWS CLI ran as\n%s\nwant\n%s", got, want)
	}
}

// When the AWS CLI fails, the request fails with what it said and what to
// do; an AWS CLI v1, which has no export-credentials, is named as such.
func TestBedrockAWSCLIFails(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/config", "[profile sso]\nsso_session = corp\n", 0o600)
	for _, c := range []struct{ name, body, want string }{
		{"sso", "echo 'Error when retrieving token from sso: Token has expired and refresh failed' >&2; exit 255",
			"no API key for Amazon Bedrock: the AWS CLI (aws configure export-credentials --profile sso --format process) failed (exit status 255): " +
				"Error when retrieving token from sso: Token has expired and refresh failed; run `aws sso login --profile sso`"},
		{"v1", "echo 'usage: aws [options] <command> <subcommand>' >&2; echo 'aws: error: argument subcommand: Invalid choice, valid choices are:' >&2; exit 2",
			"Invalid choice, valid choices are:; export-credentials needs the AWS CLI v2 (https://aws.amazon.com/cli/), and this one is older"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeAWSCLI(t, c.body)
			b := newBedrockTarget(t)
			cl, err := b.client(Settings{Profile: "sso", Region: "us-east-1"}, map[string]string{"AWS_CONFIG_FILE": dir + "/config"})
			if err != nil {
				t.Fatal(err)
			}
			b.mustFail(t, cl, c.want)
		})
	}
}

// Nothing to sign with and no AWS CLI: the provider is not built, and the
// error says what was tried and what to do.
func TestBedrockNoCredentials(t *testing.T) {
	noAWSCLI(t)
	home := t.TempDir()
	writeFile(t, home+"/.aws/config", "[profile sso]\nsso_session = corp\nregion = us-east-1\n[profile bare]\nregion = us-east-1\n", 0o600)
	b := newBedrockTarget(t)
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"nothing", map[string]string{"HOME": home, "AWS_REGION": "us-east-1"},
			`no API key for Amazon Bedrock: no AWS credentials (tried: no AWS_ACCESS_KEY_ID in the environment; ` +
				`no AWS profile "default" in ` + home + `/.aws/config or ` + home + `/.aws/credentials; the AWS CLI: no aws on PATH); ` +
				"set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, put keys or a credential_process in the profile, or set AWS_BEARER_TOKEN_BEDROCK; " +
				"for SSO, assume-role or an instance role install the AWS CLI v2 (https://aws.amazon.com/cli/) and run `aws sso login` or `aws configure`"},
		{"half the keys", map[string]string{"HOME": home, "AWS_PROFILE": "bare", "AWS_ACCESS_KEY_ID": "AKID"},
			`no AWS credentials (tried: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not; AWS profile "bare" has no keys and no credential_process; the AWS CLI: no aws on PATH)`},
		{"an SSO profile", map[string]string{"HOME": home, "AWS_PROFILE": "sso"},
			`no AWS credentials (tried: no AWS_ACCESS_KEY_ID in the environment; the AWS CLI: no aws on PATH); ` +
				`AWS profile "sso" uses sso_session, which darman reads through the AWS CLI v2: install it (https://aws.amazon.com/cli/), then run ` + "`aws sso login --profile sso`" + ` for an SSO profile`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := b.client(Settings{}, c.env)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant it to contain\n%s", err, c.want)
			}
		})
	}
	// A Bedrock API key needs none of it.
	c, err := b.client(Settings{}, map[string]string{"HOME": home, "AWS_REGION": "us-east-1", "AWS_BEARER_TOKEN_BEDROCK": "br-key"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.send(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if a := got.Header.Get("Authorization"); a != "Bearer br-key" {
		t.Errorf("Authorization %q", a)
	}
}
