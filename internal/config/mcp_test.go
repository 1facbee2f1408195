package config_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/config"
)

func TestMCPServers(t *testing.T) {
	f := newFixture(t)
	f.env["GH_TOKEN"] = "ghp_secret"
	f.write("darman.json", `{
		"mcpServers": {
			"github": {"url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${env:GH_TOKEN}"}, "required": true, "timeout": "10s"},
			"fs": {"command": "npx", "args": ["-y", "server-filesystem", "."], "env": {"DEBUG": "1"}, "cwd": "sub", "callTimeout": "1m",
				"tools": ["read_*"], "denyTools": ["read_media_file"], "sampling": {"maxTokens": 200}},
			"off": {"enabled": false},
			"helper": {"command": "helper-mcp", "agents": ["task"]},
			"either": {"command": "either-mcp", "agents": ["*"]},
		},
	}`)
	c := f.mustLoad().Config
	if got := c.MCPServers["helper"].Agents; !slices.Equal(got, []string{"task"}) {
		t.Errorf("helper's agents = %q; want [task]", got)
	}
	if got := c.MCPServers["fs"].Agents; got != nil {
		t.Errorf("fs's agents = %q; want none (every agent)", got)
	}
	gh := c.MCPServers["github"]
	if gh.Transport() != config.MCPHTTP || !gh.Required || gh.Timeout != 10*time.Second || gh.Headers["Authorization"] != "Bearer ghp_secret" {
		t.Errorf("github = %+v", gh)
	}
	fs := c.MCPServers["fs"]
	if fs.Transport() != config.MCPStdio || !slices.Equal(fs.Args, []string{"-y", "server-filesystem", "."}) || fs.Cwd != filepath.Join(f.root, "sub") ||
		fs.CallTimeout != time.Minute || fs.Sampling == nil || fs.Sampling.MaxTokens != 200 || !fs.IsEnabled() {
		t.Errorf("fs = %+v", fs)
	}
	if c.MCPServers["off"].IsEnabled() {
		t.Error(`"enabled": false server reports enabled`)
	}
	if !slices.Contains(c.Secrets(), "Bearer ghp_secret") || slices.Contains(c.Secrets(), "1") {
		t.Errorf("Secrets() = %q; want the header value and not the short env flag", c.Secrets())
	}
	out, err := json.Marshal(c.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "ghp_secret") {
		t.Errorf("Redacted() still holds the token: %s", out)
	}
	if c.MCPServers["github"].Headers["Authorization"] != "Bearer ghp_secret" {
		t.Error("Redacted() modified the original config")
	}
}

func TestMCPServerProblems(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"mcpServers": {"a": {}}}`, `mcpServers.a.command: required for a local server`},
		{`{"mcpServers": {"a": {"type": "http"}}}`, `mcpServers.a.url: required for a remote server`},
		{`{"mcpServers": {"a": {"command": "x", "url": "https://h/mcp"}}}`, `mcpServers.a.command: a remote server has no command`},
		{`{"mcpServers": {"a": {"type": "ws", "url": "https://h/mcp"}}}`, `mcpServers.a.type`},
		{`{"mcpServers": {"a": {"command": "x", "timeout": "soon"}}}`, `mcpServers.a.timeout`},
		{`{"mcpServers": {"a": {"command": "x", "sampling": {"maxTokens": 0}}}}`, `mcpServers.a.sampling.maxTokens`},
		{`{"mcpServers": {"a": {"command": "x", "agents": ["main", "tasks"]}}}`, `mcpServers.a.agents[1]: "tasks" names no agent (did you mean "task"?); expected "main" or "task"`},
		{`{"mcpServers": {"a": {"command": "x", "agents": ["[ta"]}}}`, `mcpServers.a.agents[0]: "[ta" is a malformed pattern`},
		{`{"mcpServers": {"a": {"command": "x", "agents": "task"}}}`, `mcpServers.a.agents: expected`},
	} {
		f := newFixture(t)
		f.write("darman.json", tc.doc)
		_, err := f.load()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one containing %q", tc.doc, err, tc.want)
		}
	}
	f := newFixture(t)
	f.write("darman.json", `{"mcpServers": {"a": {"enabled": false}}}`)
	if _, err := f.load(); err != nil {
		t.Errorf("a disabled server needs no command: %v", err)
	}
}
