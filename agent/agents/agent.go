package agents

import (
	_ "embed"
	"maps"
	"slices"
	"strings"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/internal/config"
)

// Mode says where an agent may run.
type Mode string

// The modes.
const (
	// Primary agents run a session's turns: the editors' picker, ACP's
	// modes and darman run --agent offer them.
	Primary Mode = "primary"
	// Subagent agents run only as the task tool's sub-agents.
	Subagent Mode = "subagent"
	// All agents run both ways.
	All Mode = "all"
)

// The built-in agents' names.
const (
	Build = "build"
	Plan  = "plan"
)

// Agent is one named agent. It is a plain value; a Catalog hands out
// copies.
type Agent struct {
	Name        string
	Description string
	Mode        Mode
	// Prompt is added to darman's system prompt while the agent runs (a
	// file's body); "" adds nothing.
	Prompt string
	// Tools, when not nil, are the only tools the agent may use, by
	// darman's names (Claude Code's are mapped: see ToolName).
	Tools []string
	// Model is the "provider/model-id" the agent runs on; "" is the
	// session's (Claude Code's inherit and its aliases sonnet, opus, haiku
	// are read as "").
	Model string
	// Permission are its rules over the configured ones; Lock are rules
	// no configuration lifts (the plan agent's), applied after them.
	Permission []permission.Rule
	Lock       []permission.Rule
	// Temperature, when set, is the sampling temperature; MaxSteps, when
	// not zero, caps the model calls of one of its turns.
	Temperature *float64
	MaxSteps    int
	// Path is the file that defined the agent last (a built-in one has
	// none); Source says where it came from: builtin, project, user,
	// claude (a .claude/agents file) or config.
	Path   string
	Source string
	// Shadowed are the files of the same name it hides.
	Shadowed []string
	// claudeSub: a Claude Code sub-agent file that sets no mode of its
	// own (Subagent by default): see RunsWhenNamed.
	claudeSub bool
}

// Runs reports whether the agent may run a session's turns (primary).
func (a Agent) Runs() bool { return a.Mode == Primary || a.Mode == All || a.Mode == "" }

// RunsWhenNamed reports whether a turn the user names the agent for may
// run it (darman run --agent, an editor's prompt with its agent): the
// agents that run, and Claude Code's sub-agent files without a mode of
// their own, which claude --agent runs the same way. The pickers (ACP's
// modes, the editors' lists) offer only the agents that Run.
func (a Agent) RunsWhenNamed() bool { return a.Runs() || a.claudeSub }

// Sub reports whether the task tool may run it.
func (a Agent) Sub() bool { return a.Mode == Subagent || a.Mode == All || a.Mode == "" }

// Allows reports whether the agent may use the tool named name: its
// tools name it (or it names none), and its lock does not deny every use
// of it. A lock that denies "*" and then allows some patterns (plan's
// bash: ls, cat, git status ...) keeps the tool for those.
func (a Agent) Allows(name string) bool {
	all := permission.Rule{Permission: name, Pattern: "*", Action: permission.Deny}
	if i := slices.Index(a.Lock, all); i >= 0 && !slices.ContainsFunc(a.Lock[i+1:], func(r permission.Rule) bool {
		return r.Permission == name && r.Action != permission.Deny
	}) {
		return false
	}
	return a.Tools == nil || slices.Contains(a.Tools, name)
}

// Rules are the rules a turn of the agent checks after the configured
// ones: its own, then its lock.
func (a Agent) Rules() []permission.Rule { return slices.Concat(a.Permission, a.Lock) }

//go:embed plan.md
var planPrompt string

// editTools are the tools that change files, which the plan agent has not.
var editTools = []string{"edit", "write", "multiedit", "apply_patch"}

// readOnlyCommands are the bash commands the plan agent may run: those
// darman's defaults allow without asking (permission.Defaults).
var readOnlyCommands = []string{
	"ls *", "pwd *", "echo *", "cat *", "head *", "tail *", "wc *", "which *", "true *", "false *",
	"grep *", "rg *", "git status *", "git diff *", "git log *", "git show *",
}

// builtins are build (darman's default agent) and plan.
func builtins() []Agent {
	plan := Agent{Name: Plan, Mode: Primary, Source: "builtin", Prompt: strings.TrimSpace(planPrompt),
		Description: "Reads and plans without changing anything: no edits, bash only for commands that read."}
	for _, t := range editTools {
		plan.Lock = append(plan.Lock, permission.Rule{Permission: t, Pattern: "*", Action: permission.Deny})
	}
	// Edits through bash (a redirection) are edit and write checks.
	plan.Lock = append(plan.Lock, permission.Rule{Permission: permission.Edit, Pattern: "*", Action: permission.Deny},
		permission.Rule{Permission: permission.Write, Pattern: "*", Action: permission.Deny},
		permission.Rule{Permission: permission.Bash, Pattern: "*", Action: permission.Deny})
	for _, p := range readOnlyCommands {
		plan.Lock = append(plan.Lock, permission.Rule{Permission: permission.Bash, Pattern: p, Action: permission.Allow})
	}
	plan.Lock = slices.CompactFunc(plan.Lock, func(a, b permission.Rule) bool { return a == b })
	return []Agent{
		{Name: Build, Mode: Primary, Source: "builtin",
			Description: "darman's default agent: reads, edits and runs commands as the permission rules allow."},
		plan,
	}
}

// claudeTools maps Claude Code's tool names to darman's.
var claudeTools = map[string]string{
	"Read": "read", "Write": "write", "Edit": "edit", "MultiEdit": "multiedit",
	"Bash": "bash", "BashOutput": "bash_output", "KillShell": "bash_kill", "KillBash": "bash_kill",
	"Glob": "glob", "Grep": "grep", "LS": "list", "WebFetch": "webfetch",
	"TodoWrite": "todo", "Task": "task", "Agent": "task", "Skill": "skill",
}

// ToolName is darman's name for a tool an agent file names: Claude Code's
// names mapped (Read → read, LS → list, mcp__server__tool →
// server_tool, Bash(git *) → bash), darman's own as they are. known is false for a name of
// neither (Claude Code's WebSearch, NotebookEdit), which is kept as
// written so an MCP tool of that name still matches.
func ToolName(name string) (darman string, known bool) {
	// Claude Code's Bash(git diff:*) limits a tool to some uses; the
	// tool is what an allow list names.
	if i := strings.IndexByte(name, '('); i > 0 && strings.HasSuffix(name, ")") {
		name = name[:i]
	}
	if d, ok := claudeTools[name]; ok {
		return d, true
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok {
			return server + "_" + tool, true
		}
	}
	if darmanTools[name] {
		return name, true
	}
	return name, false
}

// claudeOnly are Claude Code's tools darman has no counterpart of: an
// agent file written for Claude Code may name them, and they are left out.
var claudeOnly = map[string]bool{
	"WebSearch": true, "NotebookEdit": true, "NotebookRead": true, "ExitPlanMode": true, "SlashCommand": true,
	"AskUserQuestion": true, "ListMcpResourcesTool": true, "ReadMcpResourceTool": true, "TodoRead": true,
}

// checkTool says what is wrong with name in a tools list, "" when it is
// darman's tool, Claude Code's, or an MCP tool (mcp__server__tool, or
// server_tool of one of the configured servers).
func checkTool(name string, mcpServers []string) string {
	d, ok := ToolName(name)
	if ok || claudeOnly[d] {
		return ""
	}
	for _, s := range mcpServers {
		if strings.HasPrefix(d, s+"_") && len(d) > len(s)+1 {
			return ""
		}
	}
	names := slices.Sorted(maps.Keys(darmanTools))
	msg := config.UnknownName("tool", name, names)
	return msg + "; Claude Code's names (" + strings.Join(slices.Sorted(maps.Keys(claudeTools))[:4], ", ") +
		", ...) and MCP tools (mcp__SERVER__TOOL, or SERVER_TOOL for a server in mcpServers) are accepted too"
}

// darmanTools are darman's own tool names.
var darmanTools = map[string]bool{
	"read": true, "write": true, "edit": true, "multiedit": true, "apply_patch": true, "bash": true, "bash_output": true,
	"bash_kill": true, "glob": true, "grep": true, "list": true, "webfetch": true, "todo": true, "task": true, "skill": true,
	"diagnostics": true,
}
