package childenv_test

import (
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/childenv"
)

// fake builds a token of the issuer's shape at run time, so no file of the
// repository holds a string a secret scanner would take for a real one.
func fake(prefix string, n int) string {
	const alphabet = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz"
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		b.WriteByte(alphabet[i%len(alphabet)])
	}
	return b.String()
}

// TestFilterDropsSecretsByValue: a variable whose name says nothing is
// still left out when its value is a credential, and one that only looks
// like a word, a path or a flag passes.
func TestFilterDropsSecretsByValue(t *testing.T) {
	secret := map[string]string{
		"github":         fake("gh"+"p_", 36),
		"github-fine":    fake("github"+"_pat_", 60),
		"github-in-text": "Authorization: token " + fake("gh"+"o_", 36),
		"gitlab":         fake("glp"+"at-", 20),
		"anthropic":      fake("sk-"+"ant-api03-", 80),
		"openai":         fake("sk-"+"proj-", 48),
		"aws":            "AK" + "IAQ3EGRXYZ7EXAMPLE",
		"aws-session":    "id=AS" + "IAQ3EGRXYZ7EXAMPLE;",
		"slack":          "xo" + "xb-1234567890-0987654321-abcdefgh",
		"slack-webhook":  "https://hooks.slack.com/" + "services/T000/B000/XXXXXXXXXXXX",
		"npm":            fake("np"+"m_", 36),
		"pem":            "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----",
		"pem-rsa":        "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIE",
		"url-pw":         "postgres://app:" + "hunter22@db.internal:5432/app",
		"url-in-list":    "redis://cache:6379 https://user:" + "pw@example.com/x",
		"url-pw-at":      "https://u:p%40ss@h",
	}
	plain := map[string]string{
		"path":        "/usr/local/bin:/home/u/.venv/sk-learn-experiments-2024/bin:/usr/bin",
		"flag":        "-mod=mod",
		"word":        "sk-learn",
		"url":         "https://example.com/a:b@c",
		"ssh-url":     "ssh://git@github.com/x/y",
		"public-pem":  "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"upper":       "AKIAXXXX",
		"aws-in-word": "XAK" + "IAQ3EGRXYZ7EXAMPLF",
		"desk":        "desk-lamp-with-a-long-name-0123456789",
		"gh-short":    "ghp_x",
	}
	var environ []string
	for k, v := range secret {
		environ = append(environ, "S_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))+"="+v)
	}
	for k, v := range plain {
		environ = append(environ, "P_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))+"="+v)
	}
	got := strings.Join(childenv.Filter(environ, childenv.Policy{}), "\n")
	for k, v := range secret {
		if strings.Contains(got, v) {
			t.Errorf("%s passed: %q", k, v)
		}
	}
	for k, v := range plain {
		if !strings.Contains(got, v) {
			t.Errorf("%s was dropped: %q", k, v)
		}
	}
	for _, d := range childenv.Dropped(environ, childenv.Policy{}) {
		if d.Why != "secret value" {
			t.Errorf("%s dropped as %q", d.Name, d.Why)
		}
	}
	kept := childenv.Filter([]string{"S_GITHUB=" + secret["github"]}, childenv.Policy{Keep: []string{"s_github"}})
	if len(kept) != 1 {
		t.Errorf("shell.env.keep did not pass a variable dropped for its value: %q", kept)
	}
}

// TestFilterDropsSecretNames: the name patterns beyond *KEY*, *SECRET* and
// *TOKEN*, and the names that merely resemble them.
func TestFilterDropsSecretNames(t *testing.T) {
	environ := []string{"MYSQL_PWD=x", "NPM_CONFIG__AUTH=x", "PIP_AUTH_USER=x", "PROXY_AUTHORIZATION=x",
		"DB_PASSWD=x", "AZURE_CREDENTIALS=x",
		"PWD=/w", "OLDPWD=/", "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "AUTHOR=u"}
	got := childenv.Filter(environ, childenv.Policy{})
	want := "AUTHOR=u GIT_AUTHOR_EMAIL=u@x GIT_AUTHOR_NAME=u OLDPWD=/ PWD=/w"
	if strings.Join(got, " ") != want {
		t.Errorf("Filter = %q, want %q", got, want)
	}
}
