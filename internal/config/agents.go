package config

// AgentConfig defines or changes one named agent (the "agents" key). Its
// fields are an agent file's front matter keys; set ones replace the
// file's or the built-in agent's of that name.
type AgentConfig struct {
	Description string    `json:"description,omitempty" jsonschema:"What the agent is for; the task tool shows it to the model when it chooses a sub-agent."`
	Mode        AgentMode `json:"mode,omitempty" jsonschema:"primary (a session runs it; the editors' picker and ACP modes list it), subagent (only the task tool runs it) or all (both). Default all."`
	Model       string    `json:"model,omitempty" config:"model" jsonschema:"The model it runs on, as provider/model-id. Default: the session's."`
	Prompt      string    `json:"prompt,omitempty" jsonschema:"Instructions added to darman's system prompt while the agent runs."`
	Tools       []string  `json:"tools,omitempty" jsonschema:"The only tools it may use (darman's names, or Claude Code's: Read, Edit, Bash, ...). Default: all."`
	Permission  Rules     `json:"permission,omitempty" jsonschema:"Permission rules over the configured ones while the agent runs (the last matching rule wins)."`
	Temperature *float64  `json:"temperature,omitempty" config:"min=0" jsonschema:"The sampling temperature. Default: the provider's."`
	MaxSteps    int       `json:"maxSteps,omitempty" config:"min=1" jsonschema:"The most model calls in one of its turns. Default: agent.maxSteps."`
	Disable     bool      `json:"disable,omitempty" jsonschema:"Leave the agent out (a built-in one or a file's)."`
}

// AgentMode says where an agent may run.
type AgentMode string

// The modes.
const (
	AgentPrimary  AgentMode = "primary"
	AgentSubagent AgentMode = "subagent"
	AgentAll      AgentMode = "all"
)

func (AgentMode) values() []string { return []string{"primary", "subagent", "all"} }

// Agents are named agents' definitions by name (the "agents" key).
type Agents map[string]AgentConfig
