package main

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/hook"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/sandbox"
)

// configHooks are the configured hooks in the order they were read:
// by event, darman's before Claude Code's (see config.Load).
func configHooks(cfg config.Config) []hook.Hook {
	var out []hook.Hook
	events := slices.Concat(hook.Events(), nil)
	for name := range cfg.Hooks {
		if !slices.Contains(events, hook.Event(name)) {
			events = append(events, hook.Event(name))
		}
	}
	for _, ev := range events {
		for _, m := range cfg.Hooks[string(ev)] {
			for _, h := range m.Hooks {
				out = append(out, hook.Hook{Event: ev, Matcher: m.Matcher, Command: h.Command, Type: h.Type, Prompt: h.Prompt,
					Timeout: time.Duration(h.Timeout * float64(time.Second)), Origin: m.Origin, Workspace: m.Workspace})
			}
		}
	}
	return out
}

// newHooks builds a workspace's hook engine: the configured hooks, the
// workspace's run as the bash tool runs the model's commands (the OS
// sandbox sb), the user's outside it, all with the environment without
// secrets, their groups recorded in children, the
// session's transcript written for them from st (nil writes none), the
// prompt hooks' questions put to m's small model (nil: they cannot run).
// It is nil when no hook is configured; problems are the hooks left out.
func newHooks(cfg config.Config, root string, sb *sandbox.Sandbox, children *child.Registry, st transcriptRecords, m *models, log *slog.Logger) (*hook.Engine, []string) {
	hooks := configHooks(cfg)
	if len(hooks) == 0 {
		return nil, nil
	}
	opts := hook.Options{
		Hooks:    hooks,
		Root:     root,
		Environ:  childEnviron(cfg),
		Children: children,
		Logger:   log,
		Ask:      hookAsker(cfg, m),
	}
	if st != nil && cfg.DataDir != "" {
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		t := hook.NewTranscripts(transcriptStore{st}, hook.TranscriptDir(cfg.DataDir, root), root, log)
		opts.Transcript = t.Path
		// Made now: the sandbox's rules name existing paths only.
		if err := os.MkdirAll(t.Dir(), 0o700); err != nil {
			log.Warn("hook transcripts: cannot make their directory", "dir", t.Dir(), "err", err)
		}
		if sb != nil {
			// The hooks' own sandbox: bash's, and the workspace's
			// transcripts readable, which the model's commands are not.
			sb = newSandbox(withReadable(cfg, t.Dir()))
			opts.Close = sb.Close
		}
	}
	opts.Command = func(h hook.Hook, dir string, environ []string) (*exec.Cmd, error) {
		if !h.Workspace {
			// The user's own hooks are the user's programs, as in Claude
			// Code: outside the sandbox, so they can read their scripts
			// (~/.claude/hooks) and write their logs; the environment is
			// still the scrubbed one.
			return tool.ShellCommand(h.Command, dir, environ, nil, sandbox.Request{Root: root})
		}
		return tool.ShellCommand(h.Command, dir, environ, sb, sandbox.Request{Root: root})
	}
	e, problems, err := hook.New(opts)
	if err != nil {
		return nil, []string{err.Error()}
	}
	return e, problems
}

// transcriptRecords is the store as the hook transcripts read it.
type transcriptRecords interface {
	Session(ctx context.Context, id agent.ID) (agent.Session, error)
	Messages(ctx context.Context, id agent.ID) ([]agent.MessageWithParts, error)
	Page(ctx context.Context, id agent.ID, opts store.PageOptions) (store.Page, error)
}

// transcriptStore is the store as the hook transcripts read it.
type transcriptStore struct{ transcriptRecords }

func (s transcriptStore) Last(ctx context.Context, id agent.ID, n int) ([]agent.MessageWithParts, error) {
	page, err := s.Page(ctx, id, store.PageOptions{Limit: n})
	return page.Messages, err
}

// withReadable is cfg with dir readable by the sandbox's commands.
func withReadable(cfg config.Config, dir string) config.Config {
	cfg.Sandbox.ReadableDirs = append(slices.Clip(cfg.Sandbox.ReadableDirs), dir)
	return cfg
}

// sessionHooks is the engine as the session service takes it: no engine
// is no Hooks, not a nil pointer in an interface.
func sessionHooks(e *hook.Engine) session.Hooks {
	if e == nil {
		return nil
	}
	return e
}
