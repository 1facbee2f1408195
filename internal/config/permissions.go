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
	msg := fmt.Sprintf("unknown permission %q", name)
	if s := suggest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + "; expected " + quoteList(append([]string{"*"}, names...), "or")
}
