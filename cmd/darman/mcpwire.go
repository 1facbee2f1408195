package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/mcp/client"
)

// mcpDefinitions turns the configured mcpServers into the client's
// definitions; a server without cwd runs in the workspace root.
func mcpDefinitions(cfg config.Config, root string) []client.Definition {
	defs := make([]client.Definition, 0, len(cfg.MCPServers))
	environ := childEnviron(cfg)
	for _, name := range slices.Sorted(maps.Keys(cfg.MCPServers)) {
		s := cfg.MCPServers[name]
		d := client.Definition{
			Name: name, Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Cwd, Environ: environ,
			URL: s.URL, Headers: s.Headers,
			Required: s.Required, Disabled: !s.IsEnabled(),
			StartupTimeout: s.Timeout, CallTimeout: s.CallTimeout,
			Allow: s.Tools, Deny: s.DenyTools, Trusted: s.Trusted,
			SSE: s.Transport() == config.MCPSSE, ConfigFile: s.Origin, Invalid: s.Problem,
			Visible: s.Agents,
		}
		if d.Dir == "" && d.URL == "" {
			d.Dir = root
		}
		if s.Sampling != nil {
			d.SamplingMaxTokens = s.Sampling.MaxTokens
			if d.SamplingMaxTokens == 0 {
				d.SamplingMaxTokens = 1024
			}
		}
		defs = append(defs, d)
	}
	return defs
}

// mcpRuntime is what the MCP servers get from the agent beside their
// definitions.
type mcpRuntime struct {
	children *child.Registry
	gate     client.Gate
	sampler  client.Sampler
	// notify, when set, hears every state change as a notice (see
	// Status.Notice), from the first start on.
	notify func(level, text string)
}

// modelSampler serves sampling with darman's configured model, or the one
// provider.Select finds when none is configured.
func modelSampler(cfg config.Config, m *models) client.Sampler {
	return client.ModelSampler{Model: func(ctx context.Context) (llm.Provider, string, string, error) {
		ref := cfg.Model
		if ref == "" {
			sel, err := m.selectModel(ctx)
			if err != nil {
				return nil, "", "", err
			}
			ref = sel.Ref()
		}
		p, id, err := m.resolve(ref)
		return p, id, ref, err
	}}
}

// forgetMCPSession removes what the MCP client kept of a deleted session
// (its servers' identities, the images its tool calls returned).
func forgetMCPSession(cfg config.Config, id agent.ID) error {
	return client.DataLayout(cfg.DataDir).ForgetSession(string(id))
}

// startMCP makes the manager of the configured MCP servers and starts
// them, concurrently. Without wait it returns at once: the editor fronts'
// turns ask the manager for the tools of the servers ready then, and a
// turn fails while a required server is not ready (see
// session.Options.ToolSource). With wait (darman run, which runs one turn)
// it waits until every server is ready or failed, so that turn has the
// optional servers' tools too, and fails at once when a required server
// failed; optional failures are logged. The caller closes the manager.
func startMCP(ctx context.Context, cfg config.Config, root string, rt mcpRuntime, wait bool, log *slog.Logger) (*client.Manager, error) {
	data := client.DataLayout(cfg.DataDir)
	m := client.New(mcpDefinitions(cfg, root), client.Options{Logger: log, Children: rt.children, Gate: rt.gate, Sampler: rt.sampler,
		Version: readBuildInfo().Version, ProtocolCache: data.ProtocolCache, FilesDir: data.FilesDir, Sessions: data.Sessions,
		OnDrift: func(session string, drift []string) {
			log.Warn("mcp servers changed since this session last ran", "session", session, "changes", strings.Join(drift, "; "))
		}})
	if len(cfg.MCPServers) == 0 {
		return m, nil
	}
	if rt.notify != nil {
		m.Subscribe(func(s client.Status) { rt.notify(s.Notice()) })
	}
	m.Start()
	if !wait {
		return m, nil
	}
	var se *client.StartupError
	if err := m.Wait(ctx); err != nil && !errors.As(err, &se) {
		return m, err
	}
	if se != nil && se.Required() {
		return m, se
	}
	if se != nil {
		for _, f := range se.Failures {
			log.Warn("mcp server failed to start", "server", f.Server, "class", string(f.Class), "error", f.Message)
		}
	}
	return m, nil
}

// mcpToolSource is the session service's ToolSource over the MCP
// servers: each session's turn sees the servers visible to it and to its
// agent (client.AudienceOf), as they are when the turn asks. Nil when no
// server is configured.
func mcpToolSource(cfg config.Config, m *client.Manager, sessions sessionReader) func(agent.ID) tool.Source {
	if len(cfg.MCPServers) == 0 || m == nil {
		return nil
	}
	return func(id agent.ID) tool.Source {
		return m.SessionSource(string(id), func(ctx context.Context) (string, error) {
			sess, err := sessions.Session(ctx, id)
			if err != nil {
				return "", fmt.Errorf("reading session %s to know which agent runs it: %w", id, err)
			}
			return string(sess.ParentID), nil
		})
	}
}

// sessionReader reads a stored session; *store.Store is one.
type sessionReader interface {
	Session(ctx context.Context, id agent.ID) (agent.Session, error)
}
