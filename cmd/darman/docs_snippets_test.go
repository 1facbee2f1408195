package main_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestACPClientSettingsStartDarman: the Zed and JetBrains settings of
// docs/editors.md as printed: a client runs agent_servers.darman's command,
// found on its PATH, with the snippet's args and env added to its
// environment, and what it starts is an ACP agent that answers a prompt.
func TestACPClientSettingsStartDarman(t *testing.T) {
	for _, c := range []struct{ name, after string }{
		{"Zed", "**Zed**: in `settings.json`:"},
		{"JetBrains", "opens `~/.jetbrains/acp.json`:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var settings struct {
				AgentServers map[string]struct {
					Command string            `json:"command"`
					Args    []string          `json:"args"`
					Env     map[string]string `json:"env"`
				} `json:"agent_servers"`
			}
			if err := json.Unmarshal([]byte(docsBlock(t, "editors.md", "json", c.after)), &settings); err != nil {
				t.Fatalf("the %s settings do not parse: %v", c.name, err)
			}
			server, ok := settings.AgentServers["darman"]
			if !ok {
				t.Fatalf("the %s settings have no agent_servers.darman: %+v", c.name, settings)
			}
			e := newEnv(t)
			e.userProvider(llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Hello from darman acp."}}}))
			// darman on the PATH the client sees, as the docs ask.
			bin := filepath.Join(t.TempDir(), "bin")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(darmanBin, filepath.Join(bin, "darman")); err != nil {
				t.Fatal(err)
			}
			command := server.Command
			if !filepath.IsAbs(command) {
				command = filepath.Join(bin, command)
			}
			if _, err := os.Stat(command); err != nil {
				t.Fatalf("the %s settings run %q, not darman: %v", c.name, server.Command, err)
			}
			cmd := exec.Command(command, server.Args...)
			cmd.Env = append(e.vars, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			for k, v := range server.Env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			a := startACPCommand(t, e, cmd, func(string, json.RawMessage) (any, error) {
				return nil, errors.New("not offered")
			})
			a.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
			id := a.newSession(e.workspace)
			if stop := a.prompt(id, "hi"); stop != "end_turn" {
				t.Fatalf("prompt ended %q\nstderr: %s", stop, a.stderr)
			}
			if got := strings.Join(a.updates("agent_message_chunk"), ""); !strings.Contains(got, "Hello") || !strings.Contains(got, "darman acp.") {
				t.Errorf("the answer did not stream: %s", got)
			}
		})
	}
}

// docsBlock is the first ```lang block after the text after in docs/page.
func docsBlock(t *testing.T, page, lang, after string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, after)
	if i < 0 {
		t.Fatalf("docs/%s has no %q", page, after)
	}
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(text[i:])
	if m == nil {
		t.Fatalf("no ```%s block after %q in docs/%s", lang, after, page)
	}
	return m[1]
}

// TestDocsConfigSnippetsLoad: every darman configuration the README and
// docs print, as the user's config.json, is read by darman config show
// without an error: whole files as printed, excerpts of one key inside {}
// and provider entries inside {"provider": {}}. The blocks that are other
// programs' files (Zed's, JetBrains' and VS Code's settings) are not
// darman's.
func TestDocsConfigSnippetsLoad(t *testing.T) {
	others := regexp.MustCompile(`^\{\s*"(agent_servers|servers|context_servers)"`)
	excerpt := regexp.MustCompile(`^"(\w+)"\s*:`)
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	pages = append(pages, filepath.Join("..", "..", "README.md"))
	e := newEnv(t)
	// The key file two snippets read with ${file:~/.config/corp-llm-key}.
	e.write(filepath.Join(e.home, ".config", "corp-llm-key"), "sk-corp-0123456789\n")
	// darman.json's keys, from its schema: an excerpt starting with one
	// is a piece of the top-level object.
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(e.ok("config", "schema")), &schema); err != nil || len(schema.Properties) == 0 {
		t.Fatalf("darman config schema: %v", err)
	}
	cfg := filepath.Join(e.home, ".config", "darman", "config.json")
	n := 0
	for _, page := range pages {
		if filepath.Base(page) == "benchmarks.md" {
			continue
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, m := range regexp.MustCompile("(?s)```jsonc?\n(.*?)```").FindAllStringSubmatchIndex(text, -1) {
			body := strings.TrimSpace(text[m[2]:m[3]])
			where := filepath.Base(page) + ":" + strconv.Itoa(strings.Count(text[:m[0]], "\n")+1)
			if others.MatchString(body) {
				continue
			}
			if k := excerpt.FindStringSubmatch(body); k != nil {
				if _, ok := schema.Properties[k[1]]; ok {
					body = "{" + body + "}"
				} else {
					body = `{"provider": {` + body + "}}"
				}
			}
			e.write(cfg, body)
			n++
			if _, errs, code := e.run("config", "show"); code != 0 {
				t.Errorf("%s: darman config show of the snippet: exit %d\n%s\n%s", where, code, errs, body)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d configuration snippets found in the docs", n)
	}
}
