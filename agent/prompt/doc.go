// Package prompt makes what the agent loop sends besides the conversation:
// the system prompt, the user messages that commands expand to, and the
// skills the model may load.
//
// Start with Build: it assembles the system prompt from darman's own
// instructions (system.md, mentioning only the tools offered), the user's
// global instructions, the workspace's AGENTS.md or CLAUDE.md files, the
// instruction files named in the configuration, the skills list and the
// environment facts, in that order. The parts come back separately, stable
// ones first, so a provider can put a cache breakpoint after them.
// DirInstructions gives the AGENTS.md files of the directories a turn
// touches, for the loop to add as it goes.
//
// LoadCommands finds the commands (.darman/command/*.md, the user's
// command/ directory, .claude/commands/) and Command.Expand turns one into
// a user message: $ARGUMENTS, $1..$N, @file and !`cmd`. LoadSkills finds the
// skills (SKILL.md files) and Skills.Skill reads one's body when the model
// asks for it. Both report files they skip (Problems) and names hidden by
// another of higher precedence (Shadowed): project, then user, then the
// .claude layout.
//
// Nothing here runs a command on its own except git status (GitStatus,
// replaceable through Options.Git): !`cmd` goes through the Run function the
// loop supplies, which applies the bash permission.
package prompt
