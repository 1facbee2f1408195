package config_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/config"
)

// TestErrorMessages pins the exact text users read for every kind of
// mistake. "USER" in want stands for the user config file's path.
func TestErrorMessages(t *testing.T) {
	tests := []struct {
		name  string
		file  string // project file, relative to the workspace root; "USER" for the user file
		json  string
		env   map[string]string
		flags config.Flags
		want  string
	}{
		{
			name: "bad action in a pattern map",
			file: "darman.json",
			json: `{"permission": {"bash": {"git *": "yes"}}}`,
			want: `darman.json: permission.bash["git *"]: expected "allow", "ask" or "deny", got "yes"`,
		},
		{
			name: "misspelt permission name lists the permissions",
			file: "darman.json",
			json: `{"permission": {"bsh": "allow"}}`,
			want: `darman.json: permission.bsh: unknown permission "bsh" (did you mean "bash"?); expected "*", "bash", "doom_loop", "edit", "external_directory", "glob", "grep", "hook", "list", "lsp", "mcp", "powershell", "protected_path", "read", "sandbox_escape", "skill", "task", "todo", "webfetch" or "write"`,
		},
		{
			name: "Claude Code's tool name as a permission",
			file: "darman.json",
			json: `{"permission": {"Bash": {"git *": "allow"}}}`,
			want: `darman.json: permission.Bash: unknown permission "Bash" (did you mean "bash"?); expected "*", "bash", "doom_loop", "edit", "external_directory", "glob", "grep", "hook", "list", "lsp", "mcp", "powershell", "protected_path", "read", "sandbox_escape", "skill", "task", "todo", "webfetch" or "write"`,
		},
		{
			name: "permission pattern matching nothing",
			file: "darman.json",
			json: `{"permission": {"mcp_*": "deny"}}`,
			want: `darman.json: permission["mcp_*"]: the pattern "mcp_*" matches no permission; the permissions are "bash", "doom_loop", "edit", "external_directory", "glob", "grep", "hook", "list", "lsp", "mcp", "powershell", "protected_path", "read", "sandbox_escape", "skill", "task", "todo", "webfetch" and "write"`,
		},
		{
			name: "unknown key differs only in case",
			file: "USER",
			json: `{"provider": {"anthropic": {"apikey": "k"}}}`,
			want: `USER: provider.anthropic.apikey: unknown key (did you mean "apiKey"?)`,
		},
		{
			name: "integer given as a word",
			file: "darman.json",
			json: `{"agent": {"maxSteps": "ten"}}`,
			want: `darman.json: agent.maxSteps: expected an integer, got "ten"`,
		},
		{
			name: "syntax error has line and column",
			file: "darman.json",
			json: "{\n  \"model\": \"anthropic/x\",\n    oops\n}",
			want: `darman.json:3:5: invalid JSON: invalid value oops (strings and keys need "double quotes")`,
		},
		{
			name: "inline content with a number for a string",
			env:  map[string]string{"DARMAN_CONFIG_CONTENT": `{"model": 12}`},
			want: `DARMAN_CONFIG_CONTENT: model: expected a string, got 12`,
		},
		{
			name: "missing comma",
			file: "darman.json",
			json: "{\n  \"model\": \"anthropic/x\"\n  \"smallModel\": \"anthropic/y\"\n}",
			want: `darman.json:3:3: invalid JSON: invalid character '"' after object value (expecting ',' or '}')`,
		},
		{
			name: "unquoted value",
			file: "darman.json",
			json: `{"agent": {"maxSteps": ten}}`,
			want: `darman.json:1:24: invalid JSON: invalid value ten (strings and keys need "double quotes")`,
		},
		{
			name: "line break in a string",
			file: "darman.json",
			json: "{\"model\": \"anthropic/\nx\"}",
			want: `darman.json:1:11: invalid JSON: a string must not span lines (write \n for a line break)`,
		},
		{
			name: "bad escape in a string",
			file: "darman.json",
			json: `{"dataDir": "C:\Users\me"}`,
			want: `darman.json:1:13: invalid JSON: invalid string "C:\Users\me" (check its backslash escapes and control characters)`,
		},
		{
			name: "truncated file",
			file: "darman.json",
			json: `{"model": "anthropic/x"`,
			want: `darman.json:1:24: invalid JSON: unexpected end of input (is a closing bracket or quote missing?)`,
		},
		{
			name: "nesting deep enough to exhaust the parser's stack",
			file: "darman.json",
			json: `{"lsp": {"go": {"initializationOptions": ` + strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000) + `}}}`,
			want: `darman.json:1:103: invalid JSON: nested more than 64 levels deep`,
		},
		{
			name: "brackets in strings and comments do not count as nesting",
			file: "darman.json",
			json: "{/* " + strings.Repeat("[", 100) + " */ \"$schema\": \"" + strings.Repeat("[", 100) + "\\\"\", // " + strings.Repeat("{", 100) + "\n \"agent\": 3}",
			want: `darman.json: agent: expected an object, got 3`,
		},
		{
			name: "unknown key close to a real one",
			file: ".darman/config.json",
			json: `{"models": "anthropic/x"}`,
			want: `.darman/config.json: models: unknown key (did you mean "model"?)`,
		},
		{
			name: "unknown key with no near match lists the keys",
			file: "darman.json",
			json: `{"log": {"verbosity": "high"}}`,
			want: `darman.json: log.verbosity: unknown key (expected "level" or "file")`,
		},
		{
			name: "string where an array is expected",
			file: "darman.json",
			json: `{"lsp": {"go": {"command": "gopls"}}}`,
			want: `darman.json: lsp.go.command: expected an array of strings, got "gopls"`,
		},
		{
			name: "wrong element in an array",
			file: "darman.json",
			json: `{"lsp": {"go": {"command": ["gopls", 3]}}}`,
			want: `darman.json: lsp.go.command[1]: expected a string, got 3`,
		},
		{
			name: "map key that is not an identifier",
			file: "darman.json",
			json: `{"provider": {"ollama": {"models": {"qwen3:8b": {"contextWindow": -1}}}}}`,
			want: `darman.json: provider.ollama.models["qwen3:8b"].contextWindow: expected an integer of at least 0, got -1`,
		},
		{
			name: "fractional integer",
			file: "darman.json",
			json: `{"retry": {"maxAttempts": 2.5}}`,
			want: `darman.json: retry.maxAttempts: expected an integer, got 2.5`,
		},
		{
			name: "integer below its minimum",
			file: "darman.json",
			json: `{"agent": {"maxSteps": 0}}`,
			want: `darman.json: agent.maxSteps: expected an integer of at least 1, got 0`,
		},
		{
			name: "negative cost",
			file: "darman.json",
			json: `{"provider": {"openai": {"models": {"gpt-5": {"cost": {"input": -1.5}}}}}}`,
			want: `darman.json: provider.openai.models.gpt-5.cost.input: expected a number of at least 0, got -1.5`,
		},
		{
			name: "duration in words",
			file: "darman.json",
			json: `{"retry": {"maxDelay": "5 minutes"}}`,
			want: `darman.json: retry.maxDelay: expected a duration such as "30s", "2m" or "1h30m", got "5 minutes"`,
		},
		{
			name: "duration as a number",
			file: "darman.json",
			json: `{"provider": {"anthropic": {"timeout": 30}}}`,
			want: `darman.json: provider.anthropic.timeout: expected a duration such as "30s", "2m" or "1h30m", got 30`,
		},
		{
			name: "zero duration",
			file: "darman.json",
			json: `{"retry": {"maxDelay": "0s"}}`,
			want: `darman.json: retry.maxDelay: expected a positive duration, got "0s"`,
		},
		{
			name: "bad log level",
			file: "darman.json",
			json: `{"log": {"level": "verbose"}}`,
			want: `darman.json: log.level: expected "debug", "info", "warn" or "error", got "verbose"`,
		},
		{
			name: "bad provider type",
			file: "darman.json",
			json: `{"provider": {"mine": {"type": "azure", "baseURL": "https://x"}}}`,
			want: `darman.json: provider.mine.type: expected "anthropic", "openai" or "openai-compatible", got "azure"`,
		},
		{
			name: "boolean as a string",
			file: "darman.json",
			json: `{"lsp": {"go": {"disabled": "yes"}}}`,
			want: `darman.json: lsp.go.disabled: expected true or false, got "yes"`,
		},
		{
			name: "object where a string is expected",
			file: "darman.json",
			json: `{"model": {"id": "x"}}`,
			want: `darman.json: model: expected a string, got an object`,
		},
		{
			name: "null where a string is expected",
			file: "darman.json",
			json: `{"dataDir": null}`,
			want: `darman.json: dataDir: expected a string, got null`,
		},
		{
			name: "top level is not an object",
			file: "darman.json",
			json: `["model"]`,
			want: `darman.json: expected an object, got an array`,
		},
		{
			name: "permission value of the wrong type",
			file: "darman.json",
			json: `{"permission": {"edit": 3}}`,
			want: `darman.json: permission.edit: expected "allow", "ask" or "deny", or an object mapping patterns to actions, got 3`,
		},
		{
			name: "permission as an array",
			file: "darman.json",
			json: `{"permission": [{"edit": "ask"}]}`,
			want: `darman.json: permission: expected an object mapping permission names to actions, got an array`,
		},
		{
			name: "empty permission pattern",
			file: "darman.json",
			json: `{"permission": {"bash": {"": "allow"}}}`,
			want: `darman.json: permission.bash[""]: the pattern must not be empty (use "*" to match everything)`,
		},
		{
			name: "duplicate key",
			file: "darman.json",
			json: `{"permission": {"bash": "ask", "bash": "allow"}}`,
			want: `darman.json: permission.bash: duplicate key: it already appears earlier in the same object; keep one`,
		},
		{
			name: "model without a provider",
			file: "darman.json",
			json: `{"model": "claude-sonnet-4-5"}`,
			want: `darman.json: model: expected a model as provider/model-id (e.g. anthropic/claude-sonnet-4-5), got "claude-sonnet-4-5"`,
		},
		{
			name: "model with a misspelt provider",
			file: "darman.json",
			json: `{"model": "antropic/claude-sonnet-4-5"}`,
			want: `darman.json: model: unknown provider "antropic" (did you mean "anthropic"?); use a built-in provider (anthropic, azure, bedrock, codestral, deepseek, fireworks, gemini, groq, llamacpp, lmstudio, mistral, moonshot, ollama, openai, openrouter, together, vertex, vllm, xai, zai) or configure it under "provider"`,
		},
		{
			name: "custom provider without a type",
			file: "darman.json",
			json: `{"provider": {"corp": {"baseURL": "https://llm.corp.example/v1"}}}`,
			want: `darman.json: provider.corp.type: required, since "corp" is not a built-in provider (anthropic, azure, bedrock, codestral, deepseek, fireworks, gemini, groq, llamacpp, lmstudio, mistral, moonshot, ollama, openai, openrouter, together, vertex, vllm, xai, zai); expected "anthropic", "openai" or "openai-compatible"`,
		},
		{
			name: "misspelt built-in provider",
			file: "darman.json",
			json: `{"provider": {"olama": {"baseURL": "http://localhost:11434/v1"}}}`,
			want: `darman.json: provider.olama.type: required, since "olama" is not a built-in provider (did you mean "ollama"?); expected "anthropic", "openai" or "openai-compatible"`,
		},
		{
			name: "unknown reasoning field",
			file: "darman.json",
			json: `{"provider": {"deepseek": {"models": {"deepseek-chat": {"reasoningReturn": {"field": "thoughts"}}}}}}`,
			want: `darman.json: provider.deepseek.models.deepseek-chat.reasoningReturn.field: expected "none", "reasoning_content", "reasoning" or "reasoning_details", got "thoughts"`,
		},
		{
			name: "$schema is allowed only at the top",
			file: "darman.json",
			json: `{"$schema": "x", "log": {"$schema": "y"}}`,
			want: `darman.json: log["$schema"]: unknown key (expected "level" or "file")`,
		},
		{
			name: "openai-compatible provider without a base URL",
			file: "darman.json",
			json: `{"provider": {"corp": {"type": "openai-compatible"}}}`,
			want: `darman.json: provider.corp.baseURL: required for an "openai-compatible" provider, e.g. "http://localhost:8000/v1"`,
		},
		{
			name: "base URL without a scheme",
			file: "darman.json",
			json: `{"provider": {"ollama": {"baseURL": "localhost:11434"}}}`,
			want: `darman.json: provider.ollama.baseURL: expected an http:// or https:// URL, got "localhost:11434"`,
		},
		{
			name: "extension without a dot",
			file: "darman.json",
			json: `{"lsp": {"go": {"extensions": ["go"]}}}`,
			want: `darman.json: lsp.go.extensions[0]: expected a file extension starting with ".", e.g. ".go", got "go"`,
		},
		{
			name: "new language server without a command",
			file: "darman.json",
			json: `{"lsp": {"zig": {"extensions": [".zig"]}}}`,
			want: `darman.json: lsp.zig.command: required: the server's executable and its arguments, e.g. ["gopls"] (or set "disabled": true)`,
		},
		{
			name: "empty map key",
			file: "darman.json",
			json: `{"provider": {"": {"type": "openai"}}}`,
			want: `darman.json: provider[""]: the name must not be empty`,
		},
		{
			name: "several problems in document order",
			file: "darman.json",
			json: `{"model": 1, "agent": {"maxSteps": "x"}, "bogus": true}`,
			want: "darman.json: model: expected a string, got 1\n" +
				"darman.json: agent.maxSteps: expected an integer, got \"x\"\n" +
				`darman.json: bogus: unknown key (expected "model", "smallModel", "dataDir", "log", "provider", "retry", "agent", "permission", "codeActions", "transcript", "lsp", "mcpServers", "shell", "sandbox", "webfetch", "hooks", "checkpoints", "agents" or "completion")`,
		},
		{
			name: "problems from several files",
			file: "darman.json",
			json: `{"model": 1}`,
			env:  map[string]string{"DARMAN_CONFIG_CONTENT": `{"smallModel": 2}`},
			want: "darman.json: model: expected a string, got 1\n" +
				"DARMAN_CONFIG_CONTENT: smallModel: expected a string, got 2",
		},
		{
			name: "environment variable",
			env:  map[string]string{"DARMAN_LOG_LEVEL": "verbose"},
			want: `DARMAN_LOG_LEVEL: log.level: expected "debug", "info", "warn" or "error", got "verbose"`,
		},
		{
			name: "environment variable model",
			env:  map[string]string{"DARMAN_MODEL": "gpt-5"},
			want: `DARMAN_MODEL: model: expected a model as provider/model-id (e.g. anthropic/claude-sonnet-4-5), got "gpt-5"`,
		},
		{
			name:  "flag",
			flags: config.Flags{LogLevel: "trace"},
			want:  `command line: log.level: expected "debug", "info", "warn" or "error", got "trace"`,
		},
		{
			name: "unknown substitution",
			file: "darman.json",
			json: `{"provider": {"anthropic": {"apiKey": "${ANTHROPIC_API_KEY}"}}}`,
			want: `darman.json: provider.anthropic.apiKey: ${ANTHROPIC_API_KEY} is not a substitution: write ${env:ANTHROPIC_API_KEY} for the environment variable, or $${ for a literal ${`,
		},
		{
			name: "unterminated substitution",
			file: "darman.json",
			json: `{"provider": {"anthropic": {"apiKey": "${env:KEY"}}}`,
			want: `darman.json: provider.anthropic.apiKey: "${env:KEY" has no closing }: write ${env:NAME} or ${file:path}, or $${ for a literal ${`,
		},
		{
			name: "DARMAN_CONFIG names a missing file",
			env:  map[string]string{"DARMAN_CONFIG": "/nonexistent/darman.json"},
			want: `DARMAN_CONFIG: cannot read /nonexistent/darman.json: no such file or directory`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			for k, v := range tt.env {
				f.env[k] = v
			}
			want := tt.want
			switch tt.file {
			case "":
			case "USER":
				want = strings.ReplaceAll(want, "USER", f.writeUser(tt.json))
			default:
				f.write(tt.file, tt.json)
			}
			l, err := config.Load(f.options(tt.flags))
			if err == nil {
				t.Fatalf("Load succeeded with %+v; want error\n%s", l.Config, want)
			}
			if err.Error() != want {
				t.Errorf("error:\n%s\nwant:\n%s", err, want)
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Errorf("error is %T, not *config.Error", err)
			}
		})
	}
}

func TestProblemFields(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", "{\n  \"permission\": {\"bash\": {\"git *\": \"yes\"}},\n}")
	_, err := f.load()
	var ce *config.Error
	if !errors.As(err, &ce) || len(ce.Problems) != 1 {
		t.Fatalf("err = %v; want one problem", err)
	}
	p := ce.Problems[0]
	want := config.Problem{Source: "darman.json", Path: `permission.bash["git *"]`, Message: `expected "allow", "ask" or "deny", got "yes"`}
	if p.Source != want.Source || p.Path != want.Path || p.Message != want.Message || p.Line != 0 {
		t.Errorf("problem = %+v; want %+v", p, want)
	}

	f.write("darman.json", "{\n\n  \"model\" \"x\"}")
	_, err = f.load()
	if !errors.As(err, &ce) || len(ce.Problems) != 1 {
		t.Fatalf("err = %v; want one problem", err)
	}
	if p := ce.Problems[0]; p.Line != 3 || p.Column != 11 || p.Path != "" {
		t.Errorf("syntax problem = %+v; want line 3, column 11, no path", p)
	}
}

func TestProblemsAreCappedPerFile(t *testing.T) {
	f := newFixture(t)
	var keys []string
	for i := range 25 {
		keys = append(keys, fmt.Sprintf(`"unknownKey%02d": 1`, i))
	}
	f.write("darman.json", "{"+strings.Join(keys, ", ")+"}")
	f.env["DARMAN_MODEL"] = "nope"
	_, err := f.load()
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v; want *config.Error", err)
	}
	if len(ce.Problems) != 21 || ce.Omitted != 5 {
		t.Fatalf("got %d problems, %d omitted; want 20 from the file + 1 from DARMAN_MODEL, 5 omitted", len(ce.Problems), ce.Omitted)
	}
	if last := ce.Problems[20]; last.Source != "DARMAN_MODEL" {
		t.Errorf("last problem from %q; want DARMAN_MODEL (other sources are not crowded out)", last.Source)
	}
	lines := strings.Split(err.Error(), "\n")
	if got := lines[len(lines)-1]; got != "(and 5 more problems)" {
		t.Errorf("last line = %q", got)
	}
}

func TestErrorsIsFindsUnderlyingCause(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{"provider": {"anthropic": {"apiKey": "${file:secrets/key}"}}}`)
	_, err := f.load()
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(err, fs.ErrNotExist) = false for %v", err)
	}
	var p config.Problem
	if !errors.As(err, &p) || p.Path != "provider.anthropic.apiKey" {
		t.Errorf("errors.As(Problem) = %+v", p)
	}
}

func TestUnreadableFile(t *testing.T) {
	f := newFixture(t)
	// A directory where a file is expected fails to read even as root.
	if err := os.MkdirAll(filepath.Join(f.root, "darman.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := f.load()
	want := "darman.json: cannot read the file: is a directory"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v; want %s", err, want)
	}
}
