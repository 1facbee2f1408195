package complete

import (
	"path"
	"strings"
)

// DefaultExclude are the files never completed nor sent as context:
// secrets and keys. completion.exclude adds to them.
var DefaultExclude = []string{
	".env", ".env.*", "*.env", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass",
	".git-credentials", ".htpasswd", "credentials", "credentials.json", "secrets/", ".secrets/", "*.secret",
	".ssh/", ".aws/", ".gnupg/", ".docker/config.json", "*.tfstate", "*.tfvars",
}

// excluder matches workspace-relative slash paths against .gitignore-style
// patterns: a pattern without a slash matches a name at any depth, one
// with a leading or middle slash is anchored at the root, a trailing
// slash matches a directory (everything below it), "**" spans
// directories, and "!" re-includes. The last matching pattern wins.
type excluder struct {
	rules []excludeRule
}

type excludeRule struct {
	segs     []string // the pattern's path segments
	anchored bool
	dir      bool
	negate   bool
}

func newExcluder(patterns []string) *excluder {
	e := &excluder{}
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		var r excludeRule
		if strings.HasPrefix(p, "!") {
			r.negate, p = true, p[1:]
		}
		if strings.HasSuffix(p, "/") {
			r.dir, p = true, strings.TrimRight(p, "/")
		}
		if strings.HasPrefix(p, "/") {
			r.anchored, p = true, strings.TrimLeft(p, "/")
		} else if strings.Contains(p, "/") {
			r.anchored = true
		}
		if p == "" {
			continue
		}
		r.segs = strings.Split(p, "/")
		e.rules = append(e.rules, r)
	}
	return e
}

// match reports whether the slash path rel (relative to the workspace) is
// excluded.
func (e *excluder) match(rel string) bool {
	segs := strings.Split(rel, "/")
	excluded := false
	for _, r := range e.rules {
		if r.matches(segs) {
			excluded = !r.negate
		}
	}
	return excluded
}

func (r excludeRule) matches(segs []string) bool {
	// A directory rule matches a path below the directory: any proper
	// prefix of the path's segments. A file rule matches the whole path,
	// or a prefix (a directory named like the pattern holds the file).
	last := len(segs)
	if r.dir {
		last = len(segs) - 1
	}
	if r.anchored {
		for n := 1; n <= last; n++ {
			if globSegs(r.segs, segs[:n]) {
				return true
			}
		}
		return false
	}
	// Without a slash the pattern is one segment, matched against each
	// name on the path.
	for i := 0; i < last; i++ {
		if globSegs(r.segs, segs[i:i+1]) {
			return true
		}
	}
	return false
}

// globSegs matches pattern segments, where "**" matches zero or more
// segments, against path segments.
func globSegs(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if globSegs(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
		return false
	}
	return globSegs(pat[1:], segs[1:])
}

var secrets = newExcluder(DefaultExclude)

// Secret reports whether the slash path rel (relative to the workspace)
// is one of DefaultExclude's secrets and keys, which darman neither
// completes from nor sends to a model as context.
func Secret(rel string) bool { return secrets.match(rel) }
