// Package fronttest builds, for the editor fronts' tests (server/lsp,
// server/acp), the core that both run on alike: a session store, a
// provider on the scripted model (agent/llm/llmtest), and a session
// service with darman's built-in tools, the test's rules and the
// workspace's commands. Each front adds what its own Setup gives (the
// workspace, the asker). Only tests import it.
package fronttest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/checkpoint"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
)

// Core is what a test's agent runs on.
type Core struct {
	// Data is the data directory: the store, the checkpoints.
	Data     string
	Store    *store.Store
	Provider llm.Provider
}

// New opens a store in data (closed when the test ends) and an Anthropic
// provider on the scripted model at modelURL that tries each request
// once; models override the catalog's entries (nil: none).
func New(t testing.TB, data, modelURL string, models map[string]llm.ModelOverride) *Core {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(data, "store"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := provider.New(provider.Settings{Name: "anthropic", BaseURL: modelURL, APIKey: "sk-ant-test-key-0000", Models: models},
		&provider.Options{Retry: llm.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return &Core{Data: data, Store: st, Provider: p}
}

// Options are the test's choices of the service.
type Options struct {
	// Root is the workspace, whose commands the service runs by /name.
	Root string
	// Rules are the permission rules; nil means darman's defaults.
	Rules []permission.Rule
	// Timeouts give the named built-in tools a timeout of the test's in
	// place of their own.
	Timeouts map[string]time.Duration
	// Checkpoints takes snapshots before the turns' steps (a real
	// checkpoint.Keeper in the data directory), for revert.
	Checkpoints bool
}

// Agent is a service the Core built, with what the front's agent hands
// on beside it.
type Agent struct {
	Service *session.Service
	Tools   []tool.Tool
	// Keeper is the checkpoint keeper; nil without Options.Checkpoints.
	Keeper *checkpoint.Keeper
}

// Service starts a session service on the core: front holds what the
// front's Setup gives (Workspace, Asker or AskerFor, Agents...), and the
// core fills in the store, the provider for every model, the tools, the
// rules, the commands and the checkpoints.
func (c *Core) Service(o Options, front session.Options) (*Agent, error) {
	a := &Agent{Tools: timed(tool.Builtins(tool.Options{NoRipgrep: true}), o.Timeouts)}
	if o.Checkpoints {
		k, err := checkpoint.New(checkpoint.Options{Dir: filepath.Join(c.Data, "checkpoints"), Store: c.Store})
		if err != nil {
			return nil, err
		}
		a.Keeper, front.Checkpoints = k, k
	}
	rules := o.Rules
	if rules == nil {
		rules = permission.Defaults()
	}
	front.Store, front.Tools, front.Rules = c.Store, a.Tools, rules
	front.Models = func(ref string) (llm.Provider, string, error) {
		_, id, _ := strings.Cut(ref, "/")
		return c.Provider, id, nil
	}
	noEnv := func(string) (string, bool) { return "", false }
	front.Commands = func() *prompt.Commands { return prompt.LoadCommands(prompt.LocateDirs(o.Root, noEnv)) }
	svc, err := session.New(front)
	if err != nil {
		return nil, err
	}
	a.Service = svc
	return a, nil
}

// withTimeout is a tool with a timeout of the test's.
type withTimeout struct {
	tool.Tool
	timeout time.Duration
}

func (t withTimeout) Info() tool.Info {
	info := t.Tool.Info()
	info.Timeout = t.timeout
	return info
}

// timed gives the tools named in timeouts those timeouts.
func timed(tools []tool.Tool, timeouts map[string]time.Duration) []tool.Tool {
	for i, tl := range tools {
		if d, ok := timeouts[tl.Info().Name]; ok {
			tools[i] = withTimeout{tl, d}
		}
	}
	return tools
}
