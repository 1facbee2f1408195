package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/internal/config"
)

func TestDefaults(t *testing.T) {
	f := newFixture(t)
	l := f.mustLoad()
	want := config.Default()
	want.DataDir = filepath.Join(f.home, "data", "darman")
	want.WorkspaceTrusted = true // it configures nothing
	if !reflect.DeepEqual(l.Config, want) {
		t.Errorf("config with no files:\n%+v\nwant the defaults:\n%+v", l.Config, want)
	}
	c := l.Config
	if c.Log.Level != config.LevelInfo || c.Retry.MaxAttempts != 4 || c.Retry.MaxDelay != 60*time.Second || c.Agent.MaxSteps != 50 {
		t.Errorf("defaults: log %q, retry %d/%v, steps %d", c.Log.Level, c.Retry.MaxAttempts, c.Retry.MaxDelay, c.Agent.MaxSteps)
	}
	wantLSP := map[string][]string{
		"go":         {"gopls"},
		"rust":       {"rust-analyzer"},
		"typescript": {"typescript-language-server", "--stdio"},
		"python":     {"pyright-langserver", "--stdio"},
		"c":          {"clangd"},
	}
	for lang, cmd := range wantLSP {
		if got := c.LSP[lang].Command; !slices.Equal(got, cmd) {
			t.Errorf("lsp.%s.command = %q; want %q", lang, got, cmd)
		}
	}
	if got := c.LSP["typescript"].Extensions; !slices.Equal(got, []string{".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"}) {
		t.Errorf("typescript extensions = %q", got)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings: %q", l.Warnings)
	}
}

func TestDataDirDefaultFollowsXDG(t *testing.T) {
	f := newFixture(t)
	delete(f.env, "XDG_DATA_HOME")
	if got, want := f.mustLoad().Config.DataDir, filepath.Join(f.home, ".local", "share", "darman"); got != want {
		t.Errorf("without XDG_DATA_HOME: dataDir = %q; want %q", got, want)
	}
	f.env["XDG_DATA_HOME"] = "relative/dir" // the XDG spec says to ignore relative values
	if got, want := f.mustLoad().Config.DataDir, filepath.Join(f.home, ".local", "share", "darman"); got != want {
		t.Errorf("relative XDG_DATA_HOME: dataDir = %q; want %q", got, want)
	}
	delete(f.env, "HOME")
	delete(f.env, "XDG_DATA_HOME")
	_, err := f.load()
	want := "defaults: dataDir: no default (cannot find the home directory: HOME is not set); set dataDir in a config file or DARMAN_DATA_DIR"
	if err == nil || err.Error() != want {
		t.Errorf("without HOME: err = %v; want %s", err, want)
	}
	f.env["DARMAN_DATA_DIR"] = "/srv/darman"
	if got := f.mustLoad().Config.DataDir; got != "/srv/darman" {
		t.Errorf("without HOME, with DARMAN_DATA_DIR: dataDir = %q", got)
	}
}

func TestUserConfigDirFollowsXDG(t *testing.T) {
	f := newFixture(t)
	xdg := t.TempDir()
	f.env["XDG_CONFIG_HOME"] = xdg
	f.write(filepath.Join(xdg, "darman", "config.json"), `{"model": "openai/gpt-5"}`)
	opts := f.options(config.Flags{})
	opts.UserConfigDir = ""
	l, err := config.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if l.Config.Model != "openai/gpt-5" {
		t.Errorf("model = %q; want the one from $XDG_CONFIG_HOME/darman/config.json", l.Config.Model)
	}
	if dir, _ := config.UserDir(f.lookup); dir != filepath.Join(xdg, "darman") {
		t.Errorf("UserDir = %q", dir)
	}
	delete(f.env, "XDG_CONFIG_HOME")
	if dir, _ := config.UserDir(f.lookup); dir != filepath.Join(f.home, ".config", "darman") {
		t.Errorf("UserDir without XDG_CONFIG_HOME = %q", dir)
	}

	// Without a home directory there is no user file to read; say so.
	delete(f.env, "HOME")
	f.env["DARMAN_DATA_DIR"] = "/srv/darman"
	if l, err = config.Load(opts); err != nil {
		t.Fatal(err)
	}
	want := []string{"no user config file: cannot find the home directory: HOME is not set"}
	if !slices.Equal(l.Warnings, want) || l.Sources[0].Layer != "project" {
		t.Errorf("without HOME: warnings %q, first source %+v; want %q and no user source", l.Warnings, l.Sources[0], want)
	}
}

// TestMergeOrder gives each layer i the headers h_i … h_last, so header h_i
// is won by layer i exactly when every later layer is applied after it.
func TestMergeOrder(t *testing.T) {
	f := newFixture(t)
	// The workspace is two levels below the repository root.
	ws := filepath.Join(f.root, "outer", "inner")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	layers := []string{
		"user",
		"repo/.darman/config.json", "repo/darman.json",
		"outer/.darman/config.json", "outer/darman.json",
		"inner/.darman/config.json", "inner/darman.json",
		"DARMAN_CONFIG", "DARMAN_CONFIG_CONTENT",
	}
	content := func(i int) string {
		var h []string
		for j := i; j < len(layers); j++ {
			h = append(h, fmt.Sprintf(`"h%d": %q`, j, layers[i]))
		}
		return fmt.Sprintf(`{"provider": {"anthropic": {"headers": {%s}}}}`, strings.Join(h, ", "))
	}
	for i, name := range layers {
		switch {
		case name == "user":
			f.writeUser(content(i))
		case strings.HasPrefix(name, "repo/"):
			f.write(strings.TrimPrefix(name, "repo/"), content(i))
		case strings.HasPrefix(name, "outer/"):
			f.write(name, content(i))
		case strings.HasPrefix(name, "inner/"):
			f.write(filepath.Join("outer", name), content(i))
		case name == "DARMAN_CONFIG":
			f.env[name] = f.write(filepath.Join(t.TempDir(), "extra.json"), content(i))
		case name == "DARMAN_CONFIG_CONTENT":
			f.env[name] = content(i)
		}
	}
	opts := f.options(config.Flags{})
	opts.WorkspaceRoot = ws
	l, err := config.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	headers := l.Config.Provider["anthropic"].Headers
	for i, name := range layers {
		if got := headers[fmt.Sprintf("h%d", i)]; got != name {
			t.Errorf("h%d won by %q; want %q (applied after all before it)", i, got, name)
		}
	}
}

func TestEnvAndFlagsOverrideFiles(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{"model": "anthropic/from-file", "smallModel": "anthropic/from-file", "dataDir": "/from/file",
		"log": {"level": "debug", "file": "/from/file.log"}}`)
	f.env["DARMAN_CONFIG_CONTENT"] = `{"model": "anthropic/from-content", "smallModel": "anthropic/from-content", "log": {"level": "warn"}}`
	f.env["DARMAN_MODEL"] = "anthropic/from-env"
	f.env["DARMAN_SMALL_MODEL"] = "anthropic/from-env"
	f.env["DARMAN_DATA_DIR"] = "/from/env"
	f.env["DARMAN_LOG_LEVEL"] = "error"
	f.env["DARMAN_LOG_FILE"] = "/from/env.log"

	c := f.mustLoad().Config
	if c.Model != "anthropic/from-env" || c.SmallModel != "anthropic/from-env" || c.DataDir != "/from/env" ||
		c.Log.Level != "error" || c.Log.File != "/from/env.log" {
		t.Errorf("env vars did not override files: %+v %+v", c, c.Log)
	}

	flags := config.Flags{Model: "openai/from-flag", SmallModel: "openai/from-flag", DataDir: "/from/flag", LogLevel: "debug", LogFile: "/from/flag.log"}
	l, err := config.Load(f.options(flags))
	if err != nil {
		t.Fatal(err)
	}
	c = l.Config
	if c.Model != "openai/from-flag" || c.SmallModel != "openai/from-flag" || c.DataDir != "/from/flag" ||
		c.Log.Level != "debug" || c.Log.File != "/from/flag.log" {
		t.Errorf("flags did not override env vars: %+v %+v", c, c.Log)
	}

	// An empty variable or flag is not set.
	f.env["DARMAN_MODEL"] = ""
	if got := f.mustLoad().Config.Model; got != "anthropic/from-content" {
		t.Errorf("with DARMAN_MODEL empty: model = %q; want the content's", got)
	}
}

func TestObjectsMergeArraysReplace(t *testing.T) {
	f := newFixture(t)
	f.writeUser(`{
		"provider": {"anthropic": {"apiKey": "user-key", "headers": {"a": "1"}, "timeout": "30s"}},
		"lsp": {"go": {"command": ["gopls", "-remote=auto"], "env": {"GOFLAGS": "-mod=mod"}}},
	}`)
	f.write("darman.json", `{
		// comments and trailing commas are fine
		"provider": {"anthropic": {"baseURL": "https://proxy.example/v1", "headers": {"b": "2"},},},
		"lsp": {"go": {"extensions": [".go", ".tmpl"]}, "rust": {"disabled": true}},
	}`)
	c := f.mustLoad().Config
	a := c.Provider["anthropic"]
	if a.APIKey != "user-key" || a.BaseURL != "https://proxy.example/v1" || a.Timeout != 30*time.Second {
		t.Errorf("provider.anthropic did not merge key by key: %+v", a)
	}
	if !reflect.DeepEqual(a.Headers, map[string]string{"a": "1", "b": "2"}) {
		t.Errorf("headers = %v; want both layers' entries", a.Headers)
	}
	if a.Type != config.Anthropic {
		t.Errorf("type = %q; want it inferred from the name", a.Type)
	}
	goLSP := c.LSP["go"]
	if !slices.Equal(goLSP.Command, []string{"gopls", "-remote=auto"}) || !slices.Equal(goLSP.Extensions, []string{".go", ".tmpl"}) {
		t.Errorf("lsp.go = %+v; want the user's command and the project's extensions (arrays replaced)", goLSP)
	}
	if goLSP.Env["GOFLAGS"] != "-mod=mod" {
		t.Errorf("lsp.go.env lost: %v", goLSP.Env)
	}
	rust := c.LSP["rust"]
	if !rust.Disabled || !slices.Equal(rust.Command, []string{"rust-analyzer"}) {
		t.Errorf("lsp.rust = %+v; want disabled over the built-in entry", rust)
	}
	if _, ok := c.LSP["python"]; !ok {
		t.Error("built-in lsp entries not named in any file were lost")
	}
}

func TestPermissionRulesKeepOrderAcrossLayers(t *testing.T) {
	f := newFixture(t)
	f.writeUser(`{"permission": {"bash": {"*": "ask", "rm *": "deny"}, "edit": "allow"}}`)
	f.write("darman.json", `{"permission": {"edit": "ask", "bash": {"git status*": "allow", "*": "deny"}}}`)
	f.env["DARMAN_CONFIG_CONTENT"] = `{"permission": {"bash": "allow"}}`
	got := f.mustLoad().Config.Permission
	want := config.Rules{
		{Permission: "bash", Pattern: "*", Action: config.Ask},
		{Permission: "bash", Pattern: "rm *", Action: config.Deny},
		{Permission: "edit", Pattern: "*", Action: config.Allow},
		{Permission: "edit", Pattern: "*", Action: config.Ask},
		{Permission: "bash", Pattern: "git status*", Action: config.Allow},
		{Permission: "bash", Pattern: "*", Action: config.Deny},
		{Permission: "bash", Pattern: "*", Action: config.Allow},
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n%v\nwant:\n%v", got, want)
	}
}

func TestModelRefsAndProviders(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{
		"model": "ollama/qwen3:8b",
		"smallModel": "corp/team/fast:latest",
		"provider": {
			"corp": {"type": "openai-compatible", "baseURL": "https://llm.corp.example/v1",
				"models": {"team/fast:latest": {"contextWindow": 32000, "tools": true, "images": false,
					"cost": {"input": 0.5, "output": 1.5}}}},
			"ollama": {},
		},
	}`)
	c := f.mustLoad().Config
	if c.Provider["ollama"].Type != config.OpenAICompatible {
		t.Errorf("ollama type = %q; want openai-compatible inferred", c.Provider["ollama"].Type)
	}
	m := c.Provider["corp"].Models["team/fast:latest"]
	if m.ContextWindow != 32000 || m.Tools == nil || !*m.Tools || m.Images == nil || *m.Images || m.Reasoning != nil || m.Cost.Output != 1.5 {
		t.Errorf("model = %+v", m)
	}
	p, id, err := config.ParseModelRef(c.SmallModel)
	if err != nil || p != "corp" || id != "team/fast:latest" {
		t.Errorf("ParseModelRef(%q) = %q, %q, %v", c.SmallModel, p, id, err)
	}
}

func TestParseModelRef(t *testing.T) {
	tests := []struct {
		in, provider, model, err string
	}{
		{in: "anthropic/claude-sonnet-4-5", provider: "anthropic", model: "claude-sonnet-4-5"},
		{in: "ollama/qwen3:8b", provider: "ollama", model: "qwen3:8b"},
		{in: "openrouter/meta-llama/llama-3.3-70b", provider: "openrouter", model: "meta-llama/llama-3.3-70b"},
		{in: "sonnet", err: `model "sonnet" has no provider: write it as provider/model-id, e.g. anthropic/claude-sonnet-4-5`},
		{in: "/x", err: `model "/x" has an empty provider: write it as provider/model-id, e.g. anthropic/claude-sonnet-4-5`},
		{in: "openai/", err: `model "openai/" has an empty model id: write it as provider/model-id, e.g. anthropic/claude-sonnet-4-5`},
		{in: "openai/gpt 5", err: `model "openai/gpt 5" contains white space`},
	}
	for _, tt := range tests {
		p, m, err := config.ParseModelRef(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseModelRef(%q) error = %v; want %s", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || p != tt.provider || m != tt.model {
			t.Errorf("ParseModelRef(%q) = %q, %q, %v; want %q, %q", tt.in, p, m, err, tt.provider, tt.model)
		}
	}
}

func TestWalkUpStopsAtGit(t *testing.T) {
	base := t.TempDir()
	f := newFixture(t)
	repo := filepath.Join(base, "outside", "repo")
	ws := filepath.Join(repo, "sub", "pkg")
	for _, d := range []string{filepath.Join(repo, ".git"), ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.write(filepath.Join(base, "outside", "darman.json"), `{"model": "anthropic/outside-the-repo"}`)
	f.write(filepath.Join(repo, "darman.json"), `{"model": "anthropic/repo", "agent": {"maxSteps": 7}}`)
	f.write(filepath.Join(repo, "sub", ".darman", "config.json"), `{"model": "anthropic/sub"}`)

	opts := f.options(config.Flags{})
	opts.WorkspaceRoot = ws
	l, err := config.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if l.Config.Model != "anthropic/sub" || l.Config.Agent.MaxSteps != 7 {
		t.Errorf("model %q, maxSteps %d; want the nearer file's model over the repo's", l.Config.Model, l.Config.Agent.MaxSteps)
	}
	var got []string
	for _, s := range l.Sources {
		got = append(got, fmt.Sprintf("%s %s %v", s.Layer, s.Path, s.Found))
	}
	want := []string{
		"user " + filepath.Join(f.user, "config.json") + " false",
		"project " + filepath.Join(repo, ".darman", "config.json") + " false",
		"project " + filepath.Join(repo, "darman.json") + " true",
		"project " + filepath.Join(repo, "sub", ".darman", "config.json") + " true",
		"project " + filepath.Join(repo, "sub", "darman.json") + " false",
		"project " + filepath.Join(ws, ".darman", "config.json") + " false",
		"project " + filepath.Join(ws, "darman.json") + " false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("sources:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A .git file (a worktree or submodule) is a boundary too.
	if err := os.RemoveAll(filepath.Join(repo, ".git")); err != nil {
		t.Fatal(err)
	}
	f.write(filepath.Join(repo, "sub", ".git"), "gitdir: /elsewhere\n")
	if l, err = config.Load(opts); err != nil {
		t.Fatal(err)
	}
	if l.Config.Model != "anthropic/sub" || l.Config.Agent.MaxSteps != 50 {
		t.Errorf("with .git in sub: model %q, maxSteps %d; want files above sub ignored", l.Config.Model, l.Config.Agent.MaxSteps)
	}
}

func TestWalkUpWithoutGitReachesAncestors(t *testing.T) {
	base := t.TempDir()
	f := newFixture(t)
	ws := filepath.Join(base, "a", "b")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(filepath.Join(base, "darman.json"), `{"model": "anthropic/far"}`)
	opts := f.options(config.Flags{})
	opts.WorkspaceRoot = ws
	l, err := config.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if l.Config.Model != "anthropic/far" {
		t.Errorf("model = %q; want the ancestor's file to apply when there is no .git", l.Config.Model)
	}
	if first := l.Sources[1].Path; first != filepath.Join("/", ".darman", "config.json") {
		t.Errorf("first project source = %q; want the filesystem root's", first)
	}
}

func TestSourcesIncludeEnv(t *testing.T) {
	f := newFixture(t)
	extra := f.write(filepath.Join(t.TempDir(), "extra.json"), `{}`)
	f.env["DARMAN_CONFIG"] = extra
	f.env["DARMAN_CONFIG_CONTENT"] = `{}`
	l := f.mustLoad()
	n := len(l.Sources)
	want := []config.Source{{Path: extra, Layer: "env", Found: true}, {Path: "DARMAN_CONFIG_CONTENT", Layer: "env", Found: true}}
	if n < 2 || !slices.Equal(l.Sources[n-2:], want) {
		t.Errorf("last sources = %+v; want %+v", l.Sources[max(0, n-2):], want)
	}
}

func TestRelativePaths(t *testing.T) {
	f := newFixture(t)
	f.write(".darman/config.json", `{"dataDir": "store", "log": {"file": "../logs/darman.log"}}`)
	c := f.mustLoad().Config
	if want := filepath.Join(f.root, ".darman", "store"); c.DataDir != want {
		t.Errorf("dataDir = %q; want %q (relative to the file's directory)", c.DataDir, want)
	}
	if want := filepath.Join(f.root, "logs", "darman.log"); c.Log.File != want {
		t.Errorf("log.file = %q; want %q", c.Log.File, want)
	}

	f.write(".darman/config.json", `{"dataDir": "~/darman-data"}`)
	if got, want := f.mustLoad().Config.DataDir, filepath.Join(f.home, "darman-data"); got != want {
		t.Errorf("dataDir = %q; want %q (~ is home)", got, want)
	}

	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	l, err := config.Load(f.options(config.Flags{DataDir: "flagdir"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cwd, "flagdir"); l.Config.DataDir != want {
		t.Errorf("flag dataDir = %q; want %q (relative to the working directory)", l.Config.DataDir, want)
	}
}
