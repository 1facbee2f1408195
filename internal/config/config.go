package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Config is darman's merged configuration. It is a plain value: copying it
// shares its maps and slices, so treat a loaded Config as read-only.
//
// Field tags: json names the key; jsonschema is the description shown by
// editors; config holds the extra checks the loader applies and the schema
// advertises (model: a "provider/model-id" reference; path: a file path,
// relative to the config file's directory, "~/" expanded; ext: a file
// extension starting with "."; min=N: a lower bound).
type Config struct {
	Model       string               `json:"model,omitempty" config:"model" jsonschema:"The model for coding turns, as provider/model-id, e.g. anthropic/claude-sonnet-4-5 or ollama/qwen3:8b."`
	SmallModel  string               `json:"smallModel,omitempty" config:"model" jsonschema:"A cheaper model for titles and summaries, as provider/model-id."`
	DataDir     string               `json:"dataDir,omitempty" config:"path" jsonschema:"Where the session store lives. Relative to this file's directory; ~/ is the home directory. Default: $XDG_DATA_HOME/darman or the OS equivalent."`
	Log         Log                  `json:"log,omitzero" jsonschema:"Logging."`
	Provider    map[string]Provider  `json:"provider,omitempty" jsonschema:"Model providers by name. anthropic, openai, openrouter, deepseek, zai, moonshot, mistral, codestral, groq, together, fireworks, xai, gemini, azure, bedrock, vertex, ollama, lmstudio, vllm and llamacpp are built in; any other name needs a type."`
	Retry       Retry                `json:"retry,omitzero" jsonschema:"Retries of failed model requests."`
	Agent       Agent                `json:"agent,omitzero" jsonschema:"The agent loop."`
	Permission  Rules                `json:"permission,omitempty" jsonschema:"Permission rules: a permission name mapped to an action, or to an object mapping patterns to actions. The last matching rule wins."`
	CodeActions []CodeAction         `json:"codeActions,omitempty" jsonschema:"The prompts darman lsp offers as code actions on a selection, replacing the built-in ones (explain, improve, write tests, document)."`
	Transcript  *bool                `json:"transcript,omitempty" jsonschema:"Whether darman lsp keeps a Markdown transcript of each session for editors that do not show session updates. Default true."`
	LSP         map[string]LSP       `json:"lsp,omitempty" jsonschema:"Language servers by language. Entries merge over the built-in ones (go, rust, typescript, python, c)."`
	MCPServers  map[string]MCPServer `json:"mcpServers,omitempty" jsonschema:"MCP servers whose tools the agent may call, by name, in the format of .mcp.json: command/args/env/cwd for a local server, url/headers for a remote one. Their tools reach the model as {server}_{tool}."`
	Shell       Shell                `json:"shell,omitzero" jsonschema:"The processes darman starts for others: the commands the model runs, MCP stdio servers and language servers."`
	Sandbox     Sandbox              `json:"sandbox,omitzero" jsonschema:"The OS sandbox every bash command the model runs is confined by (Landlock on Linux, Seatbelt on macOS): writes only to the workspace, its temp dir and the toolchain caches; no reads of the secrets in home; no network."`
	WebFetch    WebFetch             `json:"webfetch,omitzero" jsonschema:"The webfetch tool: which addresses it may reach. Whether a fetch asks is the webfetch permission."`
	Hooks       Hooks                `json:"hooks,omitempty" jsonschema:"Commands run on the agent's events, in Claude Code's shape: an event name (PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, PreCompact, SessionStart, SessionEnd, Notification) mapped to matchers, each with a list of command hooks. Claude Code's .claude/settings.json, .claude/settings.local.json and ~/.claude/settings.json hooks run too."`
	Checkpoints Checkpoints          `json:"checkpoints,omitzero" jsonschema:"Snapshots of the workspace before each step that may change files, in a shadow git store in the data directory, so a turn can be reverted (darman sessions revert, darman.turn.revert)."`
	Agents      Agents               `json:"agents,omitempty" jsonschema:"Named agents by name: new ones, or changes to the built-in build and plan and to those of agent files (.darman/agent/*.md, .claude/agents/*.md)."`
	Completion  Completion           `json:"completion,omitzero" jsonschema:"Inline completions (ghost text) in darman lsp: the model, its wire format, the context and the limits on cost."`

	// WorkspaceTrusted reports whether the workspace's widening settings
	// applied (it was trusted, or widens nothing); set by Load. The
	// workspace's agent files follow the same decision.
	WorkspaceTrusted bool `json:"-"`
}

// Checkpoints configures the snapshots a turn can be reverted to.
type Checkpoints struct {
	Enabled      *bool `json:"enabled,omitempty" jsonschema:"Whether turns take snapshots (they need git on PATH). Default true."`
	MaxFileBytes int64 `json:"maxFileBytes,omitempty" config:"min=1" jsonschema:"The largest file a snapshot keeps, in bytes; larger files are named as not restorable when reverting. Default 2097152 (2 MiB)."`
	MaxBytes     int64 `json:"maxBytes,omitempty" config:"min=1" jsonschema:"The most space a workspace's snapshots may take, in bytes; past it the oldest turns' snapshots are dropped, and said so. Default 2147483648 (2 GiB)."`
}

// On reports whether checkpoints are taken.
func (c Checkpoints) On() bool { return c.Enabled == nil || *c.Enabled }

// WebFetch configures the addresses the webfetch tool may reach. By
// default it refuses loopback, private (RFC 1918, ULA, CGNAT), link-local,
// unspecified and multicast addresses, checked after resolving the host and
// again at connect time, so a fetched page cannot make darman probe the
// user's own machine or network.
type WebFetch struct {
	AllowPrivate bool     `json:"allowPrivate,omitempty" jsonschema:"Let webfetch reach local and private addresses too (localhost, 10.x, 192.168.x, 169.254.x, ...). Default false."`
	Allow        []string `json:"allow,omitempty" jsonschema:"Local or private places webfetch may reach although allowPrivate is off: a host name (intranet.example), a host and port (localhost:8080, [::1]:8080), an address (10.1.2.3) or a CIDR range (10.0.0.0/8)."`
}

// Shell configures the processes darman starts for others.
type Shell struct {
	Env ShellEnv `json:"env,omitzero" jsonschema:"Their environment: darman's own minus variables that look like secrets (names matching *KEY*, *SECRET*, *TOKEN*, *PASSWORD*, *PASSWD*, *CREDENTIAL*, and any holding a provider key)."`
}

// ShellEnv is the environment policy of child processes, applied in order:
// inherit, then the secret filter and exclude (keep names the exceptions),
// then set.
type ShellEnv struct {
	Inherit EnvInherit        `json:"inherit,omitempty" jsonschema:"Which of darman's variables to start from: all, core (HOME, PATH, SHELL, USER, TMPDIR, LANG and a few more) or none. Default all."`
	Keep    []string          `json:"keep,omitempty" jsonschema:"Variables passed even though their names look secret or exclude names them; * and ? allowed, any case, e.g. GITHUB_TOKEN."`
	Exclude []string          `json:"exclude,omitempty" jsonschema:"More variables to leave out; * and ? allowed, any case."`
	Set     map[string]string `json:"set,omitempty" jsonschema:"Variables to set or replace after filtering."`
}

// EnvInherit names where a child's environment starts.
type EnvInherit string

// The starting points.
const (
	EnvInheritAll  EnvInherit = "all"
	EnvInheritCore EnvInherit = "core"
	EnvInheritNone EnvInherit = "none"
)

func (EnvInherit) values() []string { return []string{"all", "core", "none"} }

// MCPServer configures one MCP server: a local one started as a child
// process (command) or a remote one reached over streamable HTTP (url).
type MCPServer struct {
	Type        MCPTransport      `json:"type,omitempty" jsonschema:"The transport; inferred from command (stdio) or url (http) when absent."`
	Command     string            `json:"command,omitempty" jsonschema:"The executable of a local server, found on PATH."`
	Args        []string          `json:"args,omitempty" jsonschema:"The arguments of a local server's command."`
	Env         map[string]string `json:"env,omitempty" jsonschema:"Extra environment variables for a local server. Prefer ${env:NAME} to writing secrets here."`
	Cwd         string            `json:"cwd,omitempty" config:"path" jsonschema:"The working directory of a local server. Relative to this file's directory; default: the workspace root."`
	URL         string            `json:"url,omitempty" config:"url" jsonschema:"The endpoint of a remote server, e.g. https://example.com/mcp."`
	Headers     map[string]string `json:"headers,omitempty" jsonschema:"Extra HTTP headers for a remote server, e.g. Authorization. Prefer ${env:NAME}."`
	Enabled     *bool             `json:"enabled,omitempty" jsonschema:"Set false to keep the entry without starting the server."`
	Required    bool              `json:"required,omitempty" jsonschema:"A required server must be ready before a turn starts; an optional one that fails leaves the rest working."`
	Timeout     time.Duration     `json:"timeout,omitempty" jsonschema:"How long startup (spawn and handshake) may take, e.g. 30s. Default 30s."`
	CallTimeout time.Duration     `json:"callTimeout,omitempty" jsonschema:"How long one tool call may take, e.g. 2m. Default 2m."`
	Tools       []string          `json:"tools,omitempty" jsonschema:"Expose only these tools (the server's own names, wildcards * and ? allowed). Default: all."`
	DenyTools   []string          `json:"denyTools,omitempty" jsonschema:"Never expose these tools (the server's own names, wildcards allowed); applied after tools."`
	Agents      []string          `json:"agents,omitempty" config:"agent" jsonschema:"Only these agents see the server's tools: main (a session's own turns) or task (sub-agents the task tool starts); wildcards * and ? allowed. Default: every agent."`
	Trusted     bool              `json:"trusted,omitempty" jsonschema:"Trust the server's readOnlyHint annotation: read-only tools run without asking. Default: every call asks (permission mcp)."`
	Sampling    *MCPSampling      `json:"sampling,omitempty" jsonschema:"Let the server ask darman's model for completions (MCP sampling). Absent: the capability is not offered."`

	// Origin is the file the server came from: a darman config file, or
	// another tool's MCP file (see MCPFileProject); set by Load.
	Origin string `json:"-"`
	// Problem, when set, says why the server cannot be started as
	// written (a VS Code ${input:...} placeholder); set by Load.
	Problem string `json:"-"`
}

// The agents an MCP server's agents key names: MCPAgentMain runs a
// session's own turns, MCPAgentTask the sub-agents its task tool starts.
const (
	MCPAgentMain = "main"
	MCPAgentTask = "task"
)

// MCPAgents are the agents an MCP server's agents key may name.
func MCPAgents() []string { return []string{MCPAgentMain, MCPAgentTask} }

// MCPSampling is the policy for a server's sampling requests.
type MCPSampling struct {
	MaxTokens int `json:"maxTokens,omitempty" config:"min=1" jsonschema:"The most tokens one sampling request may produce. Default 1024."`
}

// MCPTransport names how darman talks to an MCP server.
type MCPTransport string

// The MCP transports.
const (
	MCPStdio MCPTransport = "stdio"
	MCPHTTP  MCPTransport = "http"
	MCPSSE   MCPTransport = "sse"
)

func (MCPTransport) values() []string { return []string{"stdio", "http", "sse"} }

// IsEnabled reports whether the server should be started.
func (s MCPServer) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Transport returns the configured transport, or the one command or url
// implies.
func (s MCPServer) Transport() MCPTransport {
	switch {
	case s.Type != "":
		return s.Type
	case s.URL != "":
		return MCPHTTP
	default:
		return MCPStdio
	}
}

// Sandbox configures the OS sandbox of the model's commands.
type Sandbox struct {
	Mode            SandboxMode `json:"mode,omitempty" jsonschema:"auto: sandbox when the OS can, else run unsandboxed and say so; required: refuse to run commands without a sandbox; off: never sandbox. Default auto."`
	Network         bool        `json:"network,omitempty" jsonschema:"Let every command use the network. Default false: no TCP connect or bind, no new internet sockets."`
	NetworkCommands []string    `json:"networkCommands,omitempty" jsonschema:"Command patterns (as in permission.bash, e.g. npm install *) that may use the network; every simple command of the line must match one."`
	WritableDirs    []string    `json:"writableDirs,omitempty" config:"path" jsonschema:"More directories commands may write, besides the workspace, its temp dir and the toolchain caches. Relative to this file's directory; ~/ is the home directory."`
	ReadableDirs    []string    `json:"readableDirs,omitempty" config:"path" jsonschema:"More directories or files in the home directory commands may read (outside home everything is readable). Relative to this file's directory; ~/ is the home directory."`
	Caches          []string    `json:"caches,omitempty" config:"path" jsonschema:"More cache directories commands may write, besides Go's build and module caches, npm, pnpm, yarn, pip and cargo's."`
	Protect         []string    `json:"protect,omitempty" jsonschema:"More paths, relative to the workspace root (globs allowed), that stay read-only for commands, besides .git/hooks, .git/config, .claude/settings*.json, .mcp.json, .vscode/*.json, .envrc, .npmrc, .darman and darman.json."`
	UnixSockets     bool        `json:"unixSockets,omitempty" jsonschema:"Let commands make Unix domain sockets on kernels whose Landlock cannot confine them (ABI below 9). Default false there: a command cannot talk to ssh-agent, gpg-agent or docker through their sockets."`
}

// SandboxMode is what happens without an OS sandbox.
type SandboxMode string

// The sandbox modes.
const (
	SandboxAuto     SandboxMode = "auto"
	SandboxRequired SandboxMode = "required"
	SandboxOff      SandboxMode = "off"
)

func (SandboxMode) values() []string { return []string{"auto", "required", "off"} }

// Log configures darman's own logging.
type Log struct {
	Level Level  `json:"level,omitempty" jsonschema:"The least severe level that is logged."`
	File  string `json:"file,omitempty" config:"path" jsonschema:"Append logs to this file instead of stderr. Relative to this file's directory; ~/ is the home directory."`
}

// Provider configures one model provider.
type Provider struct {
	Type    ProviderType      `json:"type,omitempty" jsonschema:"The wire protocol. Optional for the built-in provider names."`
	BaseURL string            `json:"baseURL,omitempty" config:"url" jsonschema:"The API's base URL, e.g. http://localhost:11434/v1."`
	APIKey  string            `json:"apiKey,omitempty" jsonschema:"The API key. Prefer ${env:NAME} or ${file:path} to writing it here."`
	Headers map[string]string `json:"headers,omitempty" jsonschema:"Extra HTTP headers sent with every request."`
	Timeout time.Duration     `json:"timeout,omitempty" jsonschema:"How long a response stream may stay silent before it is abandoned, e.g. 30s."`
	Models  map[string]Model  `json:"models,omitempty" jsonschema:"Per-model settings, by model id; override the built-in catalog."`
	// API, APIVersion, Region, Profile, Project and CachedTokens are for the
	// presets that need them; see docs/providers.md.
	API          ProviderAPI  `json:"api,omitempty" jsonschema:"For type openai: responses (the default) or chat."`
	APIVersion   string       `json:"apiVersion,omitempty" jsonschema:"Azure OpenAI's api-version, e.g. 2024-10-21 (the default), or v1 for Azure's v1 API."`
	Region       string       `json:"region,omitempty" jsonschema:"The cloud region of bedrock (e.g. us-east-1) or vertex (e.g. us-east5, global)."`
	Profile      string       `json:"profile,omitempty" jsonschema:"The AWS profile of bedrock's credentials and region; empty means AWS_PROFILE, else default."`
	Project      string       `json:"project,omitempty" jsonschema:"The Google Cloud project of vertex."`
	CachedTokens CachedTokens `json:"cachedTokens,omitempty" jsonschema:"How a Chat Completions server counts cached prompt tokens when its usage has no total_tokens: included in prompt_tokens (OpenAI's way, the default) or separate."`
}

// Model describes one model of a provider. A zero field means "unknown":
// the built-in catalog (or a conservative default) applies.
type Model struct {
	Name          string `json:"name,omitempty" jsonschema:"A display name."`
	ContextWindow int    `json:"contextWindow,omitempty" config:"min=0" jsonschema:"The context window, in tokens."`
	MaxOutput     int    `json:"maxOutput,omitempty" config:"min=0" jsonschema:"The most tokens one response may have."`
	Cost          Cost   `json:"cost,omitzero" jsonschema:"Prices in USD per million tokens."`
	Reasoning     *bool  `json:"reasoning,omitempty" jsonschema:"Whether the model can think before answering."`
	Images        *bool  `json:"images,omitempty" jsonschema:"Whether the model accepts images."`
	Tools         *bool  `json:"tools,omitempty" jsonschema:"Whether the model can call tools."`
	// ReasoningReturn replaces the preset's rule for what Chat Completions
	// requests send back of the model's earlier reasoning.
	ReasoningReturn *ReasoningReturn `json:"reasoningReturn,omitempty" jsonschema:"What Chat Completions requests send back of the model's earlier reasoning; replaces the provider's rule (docs/providers.md)."`
}

// ReasoningReturn says in which field, and with which assistant messages,
// a model's reasoning goes back to a Chat Completions server.
type ReasoningReturn struct {
	Field ReasoningField `json:"field" jsonschema:"none, reasoning_content, reasoning or reasoning_details (OpenRouter's array, sent back as received)."`
	Turns ReasoningTurns `json:"turns,omitempty" jsonschema:"all (the default), tool-calls (every turn that called tools) or current (the tool loop in progress)."`
}

// ReasoningField is the message field reasoning goes back in.
type ReasoningField string

func (ReasoningField) values() []string {
	return []string{"none", "reasoning_content", "reasoning", "reasoning_details"}
}

// ReasoningTurns says which assistant messages carry their reasoning back.
type ReasoningTurns string

func (ReasoningTurns) values() []string { return []string{"all", "tool-calls", "current"} }

// ProviderAPI is the wire API of an openai provider.
type ProviderAPI string

func (ProviderAPI) values() []string { return []string{"responses", "chat"} }

// CachedTokens is how a server counts cached prompt tokens.
type CachedTokens string

func (CachedTokens) values() []string { return []string{"included", "separate"} }

// Cost is a model's price in USD per million tokens.
type Cost struct {
	Input      float64 `json:"input,omitempty" config:"min=0" jsonschema:"USD per million input tokens."`
	Output     float64 `json:"output,omitempty" config:"min=0" jsonschema:"USD per million output tokens."`
	CacheRead  float64 `json:"cacheRead,omitempty" config:"min=0" jsonschema:"USD per million tokens read from the prompt cache."`
	CacheWrite float64 `json:"cacheWrite,omitempty" config:"min=0" jsonschema:"USD per million tokens written to the prompt cache."`
}

// Retry configures retries of failed model requests.
type Retry struct {
	MaxAttempts int           `json:"maxAttempts,omitempty" config:"min=1" jsonschema:"How many times a request is tried in all."`
	MaxDelay    time.Duration `json:"maxDelay,omitempty" jsonschema:"The longest wait between two attempts, e.g. 60s."`
}

// Agent configures the agent loop.
type Agent struct {
	MaxSteps int `json:"maxSteps,omitempty" config:"min=1" jsonschema:"The most model calls in one turn."`
}

// LSP configures the language server for one language.
type LSP struct {
	Command               []string          `json:"command,omitempty" jsonschema:"The server's executable and its arguments."`
	Extensions            []string          `json:"extensions,omitempty" config:"ext" jsonschema:"The file extensions this server handles, e.g. .go."`
	Env                   map[string]string `json:"env,omitempty" jsonschema:"Extra environment variables for the server."`
	InitializationOptions json.RawMessage   `json:"initializationOptions,omitempty" jsonschema:"Sent as initializationOptions in the initialize request."`
	RootMarkers           []string          `json:"rootMarkers,omitempty" jsonschema:"Files that mark a project root, e.g. go.mod: a file is served by a server rooted at the nearest directory holding one. Replaces the built-in list."`
	Settings              json.RawMessage   `json:"settings,omitempty" jsonschema:"The server's settings, sent in answer to workspace/configuration; merged key by key over darman's defaults for the server."`
	DiagnosticsWait       time.Duration     `json:"diagnosticsWait,omitempty" jsonschema:"How long an edit waits for the server's diagnostics of the new content before going on with the last ones known, marked as possibly stale, e.g. 5s. The wait ends as soon as they arrive. Default 1.5s."`
	IdleTimeout           time.Duration     `json:"idleTimeout,omitempty" jsonschema:"Stop the server once it has not been used for this long, e.g. 30m; it starts again when next needed. Default: it runs until darman ends."`
	Disabled              bool              `json:"disabled,omitempty" jsonschema:"Never start this server."`
}

// CodeAction is a prompt offered as a code action on a selection.
type CodeAction struct {
	Title  string `json:"title" jsonschema:"What the editor shows, e.g. darman: add logging."`
	Prompt string `json:"prompt" jsonschema:"What is sent to the agent with the selection."`
}

// Rule is one permission rule: for Permission (a tool or permission name
// such as "bash" or "edit"), subjects matching Pattern get Action.
type Rule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     Action `json:"action"`
}

// Rules are permission rules in the order they were written, across layers.
// The last rule that matches wins.
type Rules []Rule

// Action is what a permission rule decides.
type Action string

// The actions.
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

func (Action) values() []string { return []string{"allow", "ask", "deny"} }

// Level is a log level name.
type Level string

// The log levels.
const (
	LevelDebug Level = "debug"
	LevelInfo  Level = "info"
	LevelWarn  Level = "warn"
	LevelError Level = "error"
)

func (Level) values() []string { return []string{"debug", "info", "warn", "error"} }

// ProviderType is the wire protocol a provider speaks.
type ProviderType string

// The provider types.
const (
	Anthropic        ProviderType = "anthropic"
	OpenAI           ProviderType = "openai"
	OpenAICompatible ProviderType = "openai-compatible"
)

func (ProviderType) values() []string { return []string{"anthropic", "openai", "openai-compatible"} }

// enum is implemented by the string types whose values are a fixed list.
type enum interface{ values() []string }

// builtinProviders maps the provider names darman knows to their type. Their
// base URLs are the provider adapters' business.
var builtinProviders = map[string]ProviderType{
	"anthropic":  Anthropic,
	"openai":     OpenAI,
	"ollama":     OpenAICompatible,
	"lmstudio":   OpenAICompatible,
	"vllm":       OpenAICompatible,
	"llamacpp":   OpenAICompatible,
	"openrouter": OpenAICompatible,
	"deepseek":   OpenAICompatible,
	"zai":        OpenAICompatible,
	"moonshot":   OpenAICompatible,
	"mistral":    OpenAICompatible,
	"codestral":  OpenAICompatible,
	"groq":       OpenAICompatible,
	"together":   OpenAICompatible,
	"fireworks":  OpenAICompatible,
	"gemini":     OpenAICompatible,
	"xai":        OpenAI,
	"azure":      OpenAI,
	"bedrock":    Anthropic,
	"vertex":     Anthropic,
}

// BuiltinProviders returns the provider names that need no "type", sorted.
func BuiltinProviders() []string {
	return slices.Sorted(maps.Keys(builtinProviders))
}

// Default returns the built-in defaults. The data directory comes from the
// process environment; it is empty when no home directory can be found.
func Default() Config {
	return defaults(platformDirs(nil))
}

func defaults(dirs dirs) Config {
	dataDir, _ := dirs.data()
	return Config{
		DataDir: dataDir,
		Log:     Log{Level: LevelInfo},
		Retry:   Retry{MaxAttempts: 4, MaxDelay: 60 * time.Second},
		Agent:   Agent{MaxSteps: 50},
		LSP: map[string]LSP{
			"go":         {Command: []string{"gopls"}, Extensions: []string{".go"}},
			"rust":       {Command: []string{"rust-analyzer"}, Extensions: []string{".rs"}},
			"typescript": {Command: []string{"typescript-language-server", "--stdio"}, Extensions: []string{".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"}},
			"python":     {Command: []string{"pyright-langserver", "--stdio"}, Extensions: []string{".py", ".pyi"}},
			"c":          {Command: []string{"clangd"}, Extensions: []string{".c", ".h", ".cc", ".cpp", ".hpp", ".cxx"}},
		},
	}
}

const redacted = "[redacted]"

// Redacted returns a copy of c with every secret that is set (provider API
// keys, header values, MCP servers' environment values) replaced by "[redacted]", for display and logs.
// c itself is not modified.
func (c Config) Redacted() Config {
	if c.Provider != nil {
		providers := make(map[string]Provider, len(c.Provider))
		for name, p := range c.Provider {
			if p.APIKey != "" {
				p.APIKey = redacted
			}
			p.Headers = redactValues(p.Headers)
			providers[name] = p
		}
		c.Provider = providers
	}
	if c.MCPServers != nil {
		servers := make(map[string]MCPServer, len(c.MCPServers))
		for name, s := range c.MCPServers {
			s.Env = redactValues(s.Env)
			s.Headers = redactValues(s.Headers)
			servers[name] = s
		}
		c.MCPServers = servers
	}
	return c
}

func redactValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != "" {
			v = redacted
		}
		out[k] = v
	}
	return out
}

const minEnvSecret = 6

// Secrets returns the secret values set in c (API keys, header values and
// MCP servers' environment values of six characters or more),
// sorted and without duplicates, so a log redactor can mask them.
func (c Config) Secrets() []string {
	var out []string
	for _, s := range c.MCPServers {
		// Short environment values ("1", "true") are flags, not secrets,
		// and masking them would garble every log line.
		for _, v := range s.Env {
			if len(v) >= minEnvSecret {
				out = append(out, v)
			}
		}
		for _, v := range s.Headers {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	for _, p := range c.Provider {
		if p.APIKey != "" {
			out = append(out, p.APIKey)
		}
		for _, v := range p.Headers {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ParseModelRef splits a model reference "provider/model-id" at the first
// "/". The model id may itself contain "/" and ":" (openrouter/meta/llama-3,
// ollama/qwen3:8b).
func ParseModelRef(s string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(s, "/")
	switch {
	case !ok:
		return "", "", fmt.Errorf("model %q has no provider: write it as provider/model-id, e.g. anthropic/claude-sonnet-4-5", s)
	case provider == "":
		return "", "", fmt.Errorf("model %q has an empty provider: write it as provider/model-id, e.g. anthropic/claude-sonnet-4-5", s)
	case model == "":
		return "", "", fmt.Errorf("model %q has an empty model id: write it as provider/model-id, e.g. anthropic/claude-sonnet-4-5", s)
	case strings.ContainsFunc(s, isSpace):
		return "", "", fmt.Errorf("model %q contains white space", s)
	}
	return provider, model, nil
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r'
}
