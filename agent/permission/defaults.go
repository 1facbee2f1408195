package permission

// Defaults returns the rules darman starts from; configuration puts them
// first, so any configured rule overrides them (the last match wins). They
// are marked Default: what they ask, a PreToolUse hook's allow may answer.
//
// Tools that only look allow: read, glob, grep, list, lsp (language-server
// queries: diagnostics, symbols, references), skill, todo, task (a subagent
// whose own calls are checked). Tools that change files or reach out ask:
// edit, write (the editor shows the diff), webfetch (a way to send data
// out), mcp, and everything not listed. external_directory and doom_loop ask.
//
// bash asks, except for commands that only read and print:
//
//	ls, pwd, echo, cat, head, tail, wc, which   print files, the directory, text
//	true, false                                 do nothing
//	grep, rg                                    search
//	git status, git diff, git log, git show     read the repository
//
// These rules cover the command only. Every path a command line names (its
// operands, option values in every spelling, redirections, $(< f)) is
// resolved, symlinks followed, and one that lands outside the workspace is
// an external_directory question of its own, which no bash rule allows; a
// word the shell expands at run time ($VAR, $(…)) is one too. Options that
// run programs or write files (rg --pre, git -c, git --output, find -exec,
// …: see Command.Dangers) are asked whatever rule allows the command, and
// writes to protected paths (see ProtectedPath) are asked as
// protected_path. Redirection to a file is an edit (see Command), so
// "cat a > b" asks. cd is not allowed: a bare "cd" goes home, and later
// reads would follow.
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
	for i := range rules {
		rules[i].Default = true
	}
	return rules
}
