// Package permission decides whether the agent may make a tool call: allow
// it, deny it, or ask the human.
//
// Start with Evaluate, a pure function: rules are {Permission, Pattern,
// Action}, the last matching rule wins, and no match means Ask. Explain says
// why. Patterns are wildcards (see match for '*', '**' and '?'); path
// permissions (read, edit, write, glob, grep, list, external_directory) keep
// '*' within one directory, other permissions let it match anything. A bash
// subject is a whole command line, cut into simple commands by SplitBash,
// each decided on its own, so an allow rule for "git status *" does not let
// "git status; rm -rf ~" run. Paths a command names are decided apart, as
// external_directory (see Path), dangerous options as bash that only a
// rule naming them allows (see Command.Dangers), writes to files that make
// other programs run as protected_path (see ProtectedPath). Defaults are
// the rules configuration starts from, and Outside tells whether a path
// leaves the workspace.
//
// Checker is the stateful part: one per session, it adds the workspace's
// "always" grants (kept through a GrantStore) to the configured rules, asks
// through an Asker what the rules leave open, and rejects with a message for
// the model when no one can be asked.
package permission
