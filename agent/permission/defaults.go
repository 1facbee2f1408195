package permission

// Defaults returns the rules darman starts from; configuration puts them
// first, so any configured rule overrides them (the last match wins).
//
// Tools that only look allow: read, glob, grep, list, lsp (language-server
// queries: diagnostics, symbols, references), skill, todo, task (a subagent
// whose own calls are checked). Tools that change files or reach out ask:
// edit, write (the editor shows the diff), webfetch (a way to send data
// out), mcp, and everything not listed. external_directory and doom_loop ask.
//
// bash asks, except for commands that only read and print, and then only
// while nothing in them points outside the workspace:
//
//	ls, pwd, echo, cat, head, tail, wc, which   print files, the directory, text
//	true, false                                 do nothing
//	grep, rg                                    search; rg --pre runs a program: asked
//	git status, git diff, git log, git show     read the repository; --output writes a file: asked
//
// and an argument that is absolute (/…), starts at home (~), climbs (../),
// or is expanded by the shell ($…, `…`, {a,b}) asks again, since these
// commands would read anything they are pointed at. Redirection to a file is
// an edit (see Command), so "cat a > b" asks. Limits: the checks are
// textual, so a symlink inside the workspace that leads out is not seen, and
// a glob like .* is assumed not to match ".." (bash 5.2's globskipdots).
// cd is not allowed: a bare "cd" goes home, and later reads would follow.
func Defaults() []Rule {
	rules := []Rule{
		{Permission: "*", Pattern: "*", Action: Ask},

		{Permission: Read, Pattern: "*", Action: Allow},
		{Permission: Glob, Pattern: "*", Action: Allow},
		{Permission: Grep, Pattern: "*", Action: Allow},
		{Permission: List, Pattern: "*", Action: Allow},
		{Permission: "lsp", Pattern: "*", Action: Allow},
		{Permission: "skill", Pattern: "*", Action: Allow},
		{Permission: "todo", Pattern: "*", Action: Allow},
		{Permission: "task", Pattern: "*", Action: Allow},

		{Permission: Edit, Pattern: "*", Action: Ask},
		{Permission: Write, Pattern: "*", Action: Ask},
		{Permission: "webfetch", Pattern: "*", Action: Ask},
		{Permission: MCP, Pattern: "*", Action: Ask},
		{Permission: ExternalDirectory, Pattern: "*", Action: Ask},
		{Permission: DoomLoop, Pattern: "*", Action: Ask},

		{Permission: Bash, Pattern: "*", Action: Ask},
	}
	for _, p := range []string{
		"ls *", "pwd *", "echo *", "cat *", "head *", "tail *", "wc *", "which *", "true *", "false *",
		"grep *", "rg *",
		"git status *", "git diff *", "git log *", "git show *",
	} {
		rules = append(rules, Rule{Permission: Bash, Pattern: p, Action: Allow})
	}
	for _, p := range []string{
		"rg *--pre*",
		"git *--output*",
		"* /*", "*=/*", // absolute paths
		"* ~*", "*=~*", // home
		"*../*", "* ..", "* .. *", "*=..", // parent directories
		"*$*", "*`*", "*{*", // expansions the text does not show
	} {
		rules = append(rules, Rule{Permission: Bash, Pattern: p, Action: Ask})
	}
	return rules
}
