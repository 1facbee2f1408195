// Package childenv decides the environment of the processes darman starts
// for others: the commands the model runs, MCP stdio servers and language
// servers. They get darman's environment minus what looks like a secret:
// variables whose names match SecretNames (any case), any variable whose
// value has a credential's shape (see secretShape: GitHub, GitLab,
// Anthropic, OpenAI, Slack and npm tokens, AWS access key ids, PEM private
// keys, URLs with a password), and any variable holding one of darman's own
// secrets (its provider keys) whatever its name, unless the policy keeps
// them by name. Values are never logged or returned: Dropped gives names.
//
// Start with Filter; Policy is what configuration says (shell.env), and
// Dropped tells `darman doctor` what a policy leaves out. The order is
// Codex's shell_environment_policy: inherit, then the secret filter and
// Exclude (with Keep as the exceptions), then Set.
package childenv

import (
	"path"
	"slices"
	"strings"
)

// Inherit says which of darman's variables a child starts from.
type Inherit string

const (
	// InheritAll starts from every variable (the default).
	InheritAll Inherit = "all"
	// InheritCore starts from the few a program needs to find its tools
	// and home: see Core.
	InheritCore Inherit = "core"
	// InheritNone starts from nothing but Set.
	InheritNone Inherit = "none"
)

// Core are the variables InheritCore keeps.
var Core = []string{"HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP",
	"LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"}

// SecretNames are the name patterns dropped unless kept, matched without
// regard to case. *_PWD is MYSQL_PWD's kind (PWD and OLDPWD, the shell's
// directories, have no '_'); the *_AUTH forms are npm's _auth and the
// like, without GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL, which git needs.
var SecretNames = []string{"*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*", "*PASSWD*", "*CREDENTIAL*",
	"*_PWD", "*_AUTH", "*_AUTH_*", "*_AUTHORIZATION*"}

// minSecret is the shortest value taken as a secret by value: shorter ones
// ("1", "true") would drop ordinary flags.
const minSecret = 8

// Policy is what a child process gets. The zero Policy inherits
// everything but secrets.
type Policy struct {
	// Inherit is where to start; "" means InheritAll.
	Inherit Inherit
	// Keep names variables (patterns with * and ?, any case) that pass
	// even though they look secret or Exclude names them.
	Keep []string
	// Exclude names more variables to drop (patterns, any case).
	Exclude []string
	// Set adds or replaces variables after the filter.
	Set map[string]string
	// Secrets are values no variable may carry into a child, whatever its
	// name (darman's provider keys); values shorter than eight bytes are
	// ignored.
	Secrets []string
}

// Filter returns environ (NAME=value entries, as os.Environ gives them)
// without what p drops, then p.Set, sorted by name.
func Filter(environ []string, p Policy) []string {
	out := make([]string, 0, len(environ)+len(p.Set))
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if _, set := p.Set[name]; set {
			continue
		}
		if p.drops(name, value) == "" {
			out = append(out, kv)
		}
	}
	for name, value := range p.Set {
		out = append(out, name+"="+value)
	}
	slices.Sort(out)
	return out
}

// Dropped returns the names of environ's variables p drops, each with the
// reason, sorted: for `darman doctor`. It never returns values.
func Dropped(environ []string, p Policy) []Drop {
	var out []Drop
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if _, set := p.Set[name]; set {
			continue
		}
		if why := p.drops(name, value); why != "" {
			out = append(out, Drop{Name: name, Why: why})
		}
	}
	slices.SortFunc(out, func(a, b Drop) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Drop is one variable a policy leaves out.
type Drop struct {
	Name string
	// Why is "inherit", "secret name", "secret value" or "exclude".
	Why string
}

// drops says why p drops a variable, "" when it passes.
func (p Policy) drops(name, value string) string {
	switch p.Inherit {
	case InheritNone:
		return "inherit"
	case InheritCore:
		if !slices.Contains(Core, name) && !strings.HasPrefix(name, "LC_") {
			return "inherit"
		}
	}
	if matchAny(p.Keep, name) {
		return ""
	}
	if len(value) >= minSecret && slices.Contains(p.Secrets, value) {
		return "secret value"
	}
	if matchAny(SecretNames, name) {
		return "secret name"
	}
	if secretShape(value) {
		return "secret value"
	}
	if matchAny(p.Exclude, name) {
		return "exclude"
	}
	return ""
}

func matchAny(patterns []string, name string) bool {
	upper := strings.ToUpper(name)
	for _, pat := range patterns {
		pat = strings.ToUpper(pat)
		// "*WORD*", as SecretNames are, is a substring test, without
		// path.Match's backtracking (which made wiping darman's
		// environment block at each start cost a third of a millisecond).
		if word, ok := strings.CutPrefix(pat, "*"); ok && strings.HasSuffix(word, "*") && !strings.ContainsAny(word[:len(word)-1], `*?[\`) {
			if strings.Contains(upper, word[:len(word)-1]) {
				return true
			}
			continue
		}
		if ok, _ := path.Match(pat, upper); ok {
			return true
		}
	}
	return false
}
