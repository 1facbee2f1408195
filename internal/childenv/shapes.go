package childenv

import "strings"

// secretShape reports whether value holds a credential by its shape,
// whatever its variable is called: a token whose prefix names its issuer,
// an AWS access key id, a PEM private key, a Slack webhook, or a URL with a
// password in it. It names no kind, so nothing about the value can reach a
// log through it.
//
// Each shape starts with a fixed marker, so an ordinary value (a path, a
// flag, a word) costs one scan per marker byte and no allocation.
func secretShape(value string) bool {
	if len(value) < minSecret {
		return false
	}
	for _, t := range prefixedTokens {
		for rest := value; ; {
			i := strings.Index(rest, t.prefix)
			if i < 0 {
				break
			}
			if i == 0 || !tokenByte(rest[i-1]) || t.hook {
				if run := tokenRun(rest[i+len(t.prefix):], t.hook); len(run) >= t.min && (!t.mixed || mixed(run)) {
					return true
				}
			}
			rest = rest[i+len(t.prefix):]
		}
	}
	return awsKeyID(value) || pemPrivateKey(value) || urlPassword(value)
}

// prefixedTokens are the tokens whose issuer marks them with a prefix:
// the least run of token characters after it that makes one (shorter runs
// are words such as "sk-learn"; the lengths are under what the issuers
// hand out today), whether that run is random enough to hold upper- and
// lower-case letters and digits (a directory "sk-learn-experiments-2024"
// on PATH is not a key), and whether it is a URL's path (a webhook).
var prefixedTokens = []struct {
	prefix      string
	min         int
	mixed, hook bool
}{
	// GitHub: personal, OAuth, user-to-server, server-to-server, refresh
	// tokens, fine-grained personal tokens.
	{"ghp_", 30, true, false}, {"gho_", 30, true, false}, {"ghu_", 30, true, false},
	{"ghs_", 30, true, false}, {"ghr_", 30, true, false}, {"github_pat_", 30, true, false},
	// GitLab: personal, deploy, runner, pipeline trigger, feed, OAuth app
	// secret, service account, incoming mail, agent, CI build tokens.
	{"glpat-", 20, false, false}, {"gldt-", 20, false, false}, {"glrt-", 20, false, false},
	{"glptt-", 20, false, false}, {"glft-", 20, false, false}, {"gloas-", 20, false, false},
	{"glsoat-", 20, false, false}, {"glimt-", 20, false, false}, {"glagent-", 20, false, false},
	{"glcbt-", 20, false, false},
	// Anthropic (sk-ant-…) and OpenAI (sk-…, sk-proj-…, sk-svcacct-…).
	{"sk-", 20, true, false},
	// Slack bot, user, app-level, refresh and configuration tokens.
	{"xoxb-", 10, false, false}, {"xoxp-", 10, false, false}, {"xoxa-", 10, false, false},
	{"xoxe-", 10, false, false}, {"xoxr-", 10, false, false}, {"xoxs-", 10, false, false},
	{"xapp-", 10, false, false},
	// Slack's incoming webhooks hold their secret in the path.
	{"hooks.slack.com/services/", 10, false, true}, {"hooks.slack.com/workflows/", 10, false, true},
	// npm access tokens.
	{"npm_", 30, true, false},
}

// tokenByte reports whether b may be part of a token.
func tokenByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// tokenRun is the token bytes s starts with ('/' too in a URL's path).
func tokenRun(s string, path bool) string {
	n := 0
	for n < len(s) && (tokenByte(s[n]) || path && s[n] == '/') {
		n++
	}
	return s[:n]
}

// mixed reports whether s holds an upper-case letter, a lower-case one
// and a digit.
func mixed(s string) bool {
	var up, low, digit bool
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b >= 'A' && b <= 'Z':
			up = true
		case b >= 'a' && b <= 'z':
			low = true
		case b >= '0' && b <= '9':
			digit = true
		}
	}
	return up && low && digit
}

// awsKeyID reports whether s holds an AWS access key id: a four-letter
// prefix saying what it belongs to (AKIA a user's long-term key, ASIA a
// session's) and sixteen upper-case letters and digits, alone as a word.
func awsKeyID(s string) bool {
	for i := 0; i+20 <= len(s); i++ {
		if s[i] != 'A' || i > 0 && upperOrDigit(s[i-1]) {
			continue
		}
		switch s[i : i+4] {
		case "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "APKA", "AROA", "ASCA":
		default:
			continue
		}
		n := 4
		for n < 20 && upperOrDigit(s[i+n]) {
			n++
		}
		if n == 20 && (i+20 == len(s) || !upperOrDigit(s[i+20])) {
			return true
		}
	}
	return false
}

func upperOrDigit(b byte) bool { return b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' }

// pemPrivateKey reports whether s holds a PEM private key of any kind
// ("-----BEGIN PRIVATE KEY-----", "… RSA PRIVATE KEY-----", "… OPENSSH
// PRIVATE KEY-----", "… ENCRYPTED PRIVATE KEY-----").
func pemPrivateKey(s string) bool {
	i := strings.Index(s, "-----BEGIN ")
	if i < 0 {
		return false
	}
	line, _, _ := strings.Cut(s[i+len("-----BEGIN "):], "-----")
	return strings.HasSuffix(line, "PRIVATE KEY")
}

// urlPassword reports whether s holds a URL with a password in its user
// information: scheme://user:password@host (postgres://, https://, redis://…).
// A user name alone (ssh://git@host) is no secret.
func urlPassword(s string) bool {
	for rest := s; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return false
		}
		rest = rest[i+3:]
		// The authority ends at the path, query, fragment or a space.
		end := strings.IndexAny(rest, "/?# \t\n")
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		if at := strings.LastIndexByte(auth, '@'); at > 0 {
			if _, pw, ok := strings.Cut(auth[:at], ":"); ok && pw != "" {
				return true
			}
		}
	}
}
