package config_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/config"
)

func TestForeignMCPFiles(t *testing.T) {
	f := newFixture(t)
	f.env["GH_TOKEN"] = "ghp_secret"
	claude := f.write(filepath.Join(f.home, ".claude.json"), `{
		"numStartups": 3,
		"mcpServers": {
			"userwide": {"command": "uvx", "args": ["mcp-server-time"]},
			"shadowed": {"command": "from-claude-user"}
		},
		"projects": {`+strconvQuote(f.root)+`: {"mcpServers": {"local": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}}
	}`)
	vscode := f.write(".vscode/mcp.json", `{
		// VS Code's file allows comments.
		"inputs": [{"type": "promptString", "id": "token", "password": true}],
		"servers": {
			"gh": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${input:token}"}},
			"fs": {"command": "npx", "args": ["-y", "server-filesystem", "${workspaceFolder}"], "env": {"TOKEN": "${env:GH_TOKEN}"}, "envFile": "${workspaceFolder}/.env"},
			"shadowed": {"command": "from-vscode"},
		},
	}`)
	f.write(".env", "# comment\nFROM_FILE=\"quoted value\"\nTOKEN=not-this-one\n")
	project := f.write(".mcp.json", `{"mcpServers": {
		"db": {"command": "db-mcp", "env": {"DSN": "${DB_DSN:-postgres://localhost/dev}", "KEY": "${GH_TOKEN}", "NONE": "${NOT_SET}"}},
		"own": {"command": "from-mcp-json"},
		"scoped": {"command": "scoped-mcp", "agents": ["task"]},
		"broken": {"args": ["no command"]}
	}}`)
	own := f.write("darman.json", `{"mcpServers": {"own": {"command": "from-darman"}}}`)

	l := f.mustLoad()
	servers := l.Config.MCPServers
	want := map[string]string{"userwide": claude, "shadowed": project, "local": claude, "gh": vscode, "fs": vscode, "db": project, "own": "darman.json"}
	if own != filepath.Join(f.root, "darman.json") {
		t.Fatal("fixture wrote darman.json elsewhere")
	}
	want["shadowed"] = vscode
	for name, origin := range want {
		if got := servers[name].Origin; got != origin {
			t.Errorf("%s: origin %q; want %q", name, got, origin)
		}
	}
	if _, ok := servers["broken"]; ok {
		t.Error("an entry with neither command nor url was kept")
	}
	if got := servers["own"].Command; got != "from-darman" {
		t.Errorf("own: command %q; darman's own config must win over .mcp.json", got)
	}
	if got := servers["shadowed"].Command; got != "from-vscode" {
		t.Errorf("shadowed: command %q; .vscode/mcp.json must win over Claude's user servers", got)
	}
	if s := servers["local"]; s.Transport() != config.MCPSSE || s.URL != "http://127.0.0.1:9/sse" {
		t.Errorf("Claude's per-project server = %+v", s)
	}
	fs := servers["fs"]
	if !slices.Equal(fs.Args, []string{"-y", "server-filesystem", f.root}) || fs.Env["TOKEN"] != "ghp_secret" || fs.Env["FROM_FILE"] != "quoted value" || fs.Problem != "" {
		t.Errorf("fs = %+v; want ${workspaceFolder} and ${env:} expanded, envFile read under env", fs)
	}
	db := servers["db"]
	if db.Env["DSN"] != "postgres://localhost/dev" || db.Env["KEY"] != "ghp_secret" || db.Env["NONE"] != "" {
		t.Errorf("db env = %q; want Claude's ${VAR} and ${VAR:-default} expanded", db.Env)
	}
	gh := servers["gh"]
	if !strings.Contains(gh.Problem, "${input:token}") {
		t.Errorf("gh problem = %q; want ${input:token} reported as unsupported", gh.Problem)
	}
	joined := strings.Join(l.Warnings, "\n")
	if got := servers["scoped"].Agents; got != nil {
		t.Errorf("scoped: agents %q from .mcp.json; want none (darman's key, read only from its own config)", got)
	}
	for _, w := range []string{"NOT_SET is not set", `"broken": has neither command nor url`, "${input:token}",
		`MCP server "scoped": "agents" is read only from darman's own mcpServers`} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings %q lack %q", l.Warnings, w)
		}
	}
	if strings.Contains(joined, "ghp_secret") {
		t.Errorf("a warning shows a secret: %q", l.Warnings)
	}
}

func TestForeignMCPFileBrokenIsAWarning(t *testing.T) {
	f := newFixture(t)
	f.write(".mcp.json", `{"mcpServers": {`)
	f.write(".vscode/mcp.json", `[1, 2]`)
	l := f.mustLoad()
	if len(l.Config.MCPServers) != 0 {
		t.Errorf("servers = %v; want none from broken files", l.Config.MCPServers)
	}
	joined := strings.Join(l.Warnings, "\n")
	if !strings.Contains(joined, ".mcp.json:") || !strings.Contains(joined, "invalid JSON") || !strings.Contains(joined, "expected a JSON object") {
		t.Errorf("warnings = %q; want both files named", l.Warnings)
	}
}

// Claude Code's user file is mostly history: darman picks the two
// servers objects out of it and passes over everything else, including
// other projects' servers and values nested deep inside the history.
func TestClaudeUserFileReadsOnlyItsServers(t *testing.T) {
	f := newFixture(t)
	root := strconvQuote(f.root)
	f.write(filepath.Join(f.home, ".claude.json"), `{
		"numStartups": 3, "tipsHistory": {"a": [1, 2.5e3, true, null, "\u00e9"]},
		"projects": {
			"/elsewhere": {"mcpServers": {"other": {"command": "not-this-project"}}, "history": [{"mcpServers": {"nested": {"command": "x"}}}]},
			`+root+`: {"history": [{"display": "hi", "pastedContents": {}}], "mcpServers": {"local": {"command": "local-mcp"}}},
			`+root+`: {"mcpServers": {"repeated": {"command": "second-entry"}}}
		},
		"mcpServers": {"userwide": {"command": "uvx", "args": ["mcp-server-time"]}},
		"mcpServers": {"repeated": {"command": "second-key"}}
	}`)
	servers := f.mustLoad().Config.MCPServers
	names := slices.Sorted(maps.Keys(servers))
	if !slices.Equal(names, []string{"local", "userwide"}) {
		t.Fatalf("servers = %v; want local (this project's) and userwide, the first of repeated keys", names)
	}
	if got := servers["local"].Command; got != "local-mcp" {
		t.Errorf("local command = %q", got)
	}
}

// A hand-edited ~/.claude.json may hold comments or a trailing comma: it is
// read as before, and a broken one is a warning with its line and column.
func TestClaudeUserFileLenientAndBroken(t *testing.T) {
	f := newFixture(t)
	path := f.write(filepath.Join(f.home, ".claude.json"), `{
		// added by hand
		"mcpServers": {"userwide": {"command": "uvx"},},
	}`)
	if got := f.mustLoad().Config.MCPServers["userwide"].Command; got != "uvx" {
		t.Errorf("userwide command = %q; want the server of a file with comments", got)
	}
	f.write(path, "{\n\"mcpServers\": {\"a\": {\"command\": \"x\"}}\n\"projects\": {}}")
	l := f.mustLoad()
	if len(l.Config.MCPServers) != 0 {
		t.Errorf("servers = %v; want none from a broken file", l.Config.MCPServers)
	}
	if want := path + ":3:1: invalid JSON"; !strings.Contains(strings.Join(l.Warnings, "\n"), want) {
		t.Errorf("warnings = %q; want %q", l.Warnings, want)
	}
	f.write(path, `{"mcpServers": {"a": {"command": "x"}}} {"second": 1}`)
	l = f.mustLoad()
	if len(l.Config.MCPServers) != 0 || !strings.Contains(strings.Join(l.Warnings, "\n"), path+":1:") {
		t.Errorf("servers = %v, warnings = %q; want a file with two values refused with a position", l.Config.MCPServers, l.Warnings)
	}
	f.write(path, `{"projects": {`+strconvQuote(f.root)+`: "not an object"}, "mcpServers": []}`)
	l = f.mustLoad()
	if len(l.Config.MCPServers) != 0 || !strings.Contains(strings.Join(l.Warnings, "\n"), "servers are not an object") {
		t.Errorf("servers = %v, warnings = %q; want the array of servers refused", l.Config.MCPServers, l.Warnings)
	}
}

func strconvQuote(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		if r == '"' || r == '\\' {
			b = append(b, '\\')
		}
		b = append(b, string(r)...)
	}
	return string(append(b, '"'))
}
