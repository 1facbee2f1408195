package config

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// PermissionNames are the permissions darman's tools and checks ask for,
// sorted: the names a permission rule may use (besides patterns such as
// "*" that match some of them). A rule naming anything else would never
// match, so configuration and --allow/--deny refuse it. A new permission
// is added here, or no one can write a rule for it.
func PermissionNames() []string {
	return []string{
		"bash", "doom_loop", "edit", "external_directory", "glob", "grep", "hook", "list", "lsp", "mcp",
		"powershell", "protected_path", "read", "sandbox_escape", "skill", "task", "todo", "webfetch", "write",
	}
}

// CheckPermissionName says what is wrong with name as a rule's permission,
// "" when it is one of PermissionNames or a pattern matching one.
func CheckPermissionName(name string) string {
	names := PermissionNames()
	if slices.Contains(names, name) {
		return ""
	}
	if strings.ContainsAny(name, "*?") {
		for _, n := range names {
			if ok, _ := path.Match(name, n); ok {
				return ""
			}
		}
		return fmt.Sprintf("the pattern %q matches no permission; the permissions are %s", name, quoteList(names, "and"))
	}
	return UnknownName("permission", name, append([]string{"*"}, names...))
}

// UnknownName says that name is not a known what (a permission, a tool),
// with the one of names it most likely meant and the list of them:
// `unknown tool "raed" (did you mean "read"?); expected "bash", ... or "write"`.
func UnknownName(what, name string, names []string) string {
	msg := fmt.Sprintf("unknown %s %q", what, name)
	if s := suggest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + "; expected " + quoteList(names, "or")
}
