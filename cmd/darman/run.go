package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/cmd/darman/internal/terminal"
	"github.com/darman-dev/darman/internal/sandbox"
)

func (a *app) runCommand() *cobra.Command {
	var (
		sessionArg   string
		continueLast bool
		format       string
		allow, deny  []string
		images       []string
		agentName    string
		trust        bool
	)
	cmd := &cobra.Command{
		Use:   "run [prompt | /command [arguments]]",
		Short: "Run one turn of the agent in the current workspace, from the shell",
		Long: `run sends a prompt to the agent in the current workspace and streams the
answer to stdout (tool calls as one-line summaries on stderr), or every event
as a JSON line with --format json, ending with one line
{"type":"result", "sessionId", "result" (the answer's text), "stopReason",
"isError", "error", "usage", "costUsd", "durationMs"}. The prompt is the
arguments, or stdin when there are none.

A prompt that starts with /name runs the command called name: a Markdown
template in .darman/command/name.md (or the user's command/ directory, or
.claude/commands/), given the words after the name as its arguments, with
@file and !` + "`cmd`" + ` expanded (commands run under the bash permission). Its
front matter's model, when set, is the model of that turn:

  darman run /review internal/config/load.go

Permissions the rules leave open are asked on the terminal; without one they
are rejected (unless a PreToolUse hook allowed the call), the model is told
why, and darman says which flags would allow them. --allow and --deny add
rules for this run: "edit", "bash:go test *".

--agent runs the turn with a named agent (and makes it the session's): the
built-in build (the default) or plan (reads and plans, never edits), or one
of .darman/agent/*.md, .claude/agents/*.md and the configuration's agents.
A Claude Code sub-agent file (.claude/agents/NAME.md without a mode) runs
this way too, as claude --agent runs it; the editors' pickers list only the
agents whose mode is primary or all.

A folder's own configuration (darman.json, .darman/, .claude/settings.json
hooks, .mcp.json servers, agent files' permission blocks) may only narrow
what darman does until you trust the folder: on a terminal, the first run
shows what it would configure and asks; without one it stays untrusted
unless "darman trust" recorded it or --trust is given.

Exit status: 0 when the turn finished, 1 when it failed, 130 when it was
interrupted (the turn is saved as cancelled).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format %q: expected text or json", format)
			}
			var extra []permission.Rule
			for _, v := range allow {
				r, err := parseRuleFlag(v, permission.Allow)
				if err != nil {
					return err
				}
				extra = append(extra, r)
			}
			for _, v := range deny {
				r, err := parseRuleFlag(v, permission.Deny)
				if err != nil {
					return err
				}
				extra = append(extra, r)
			}
			// An image alone is a prompt, as in the editors' chat.
			prompt, err := readPrompt(args, len(images) > 0)
			if err != nil {
				return err
			}
			imgs, err := readImages(images)
			if err != nil {
				return err
			}
			return a.runTurn(cmd.Context(), runOptions{session: sessionArg, continueLast: continueLast, json: format == "json", rules: extra, prompt: prompt, images: imgs, agent: agentName, trust: trust})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&sessionArg, "session", "s", "", "continue this session")
	f.BoolVarP(&continueLast, "continue", "c", false, "continue the workspace's most recent session")
	f.StringVar(&format, "format", "text", "text, or json: one event per line, then one result line")
	f.StringArrayVar(&allow, "allow", nil, `allow a permission for this run: "edit", "bash:go test *" (repeatable)`)
	f.StringArrayVar(&deny, "deny", nil, `deny a permission for this run (repeatable)`)
	f.StringArrayVar(&images, "image", nil, "attach an image file (PNG, JPEG, GIF or WebP) to the prompt (repeatable)")
	f.StringVar(&agentName, "agent", "", "run the turn with this agent: build, plan, or one of the workspace's (darman doctor lists them)")
	f.BoolVar(&trust, "trust", false, "trust the workspace's own configuration for this run (hooks, MCP servers, allow rules), recording nothing: for CI jobs that chose it")
	cmd.RegisterFlagCompletionFunc("format", completeWords("text", "json"))
	cmd.RegisterFlagCompletionFunc("agent", a.completeAgents)
	return cmd
}

type runOptions struct {
	session      string
	continueLast bool
	json         bool
	rules        []permission.Rule
	prompt       string
	images       []session.Part
	agent        string
	trust        bool
}

// readPrompt is the prompt from the arguments, else from stdin when it is
// not a terminal; with images, no text is a prompt too. A prompt that is
// not UTF-8 is refused: no record of the turn could keep it (the store
// and the model's request are JSON), so the turn would run without it.
func readPrompt(args []string, images bool) (string, error) {
	if len(args) > 0 {
		return utf8Prompt(strings.Join(args, " "))
	}
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		if images {
			return "", nil
		}
		return "", errors.New("no prompt: give it as an argument (darman run \"fix the failing test\"), on stdin, or attach an image with --image")
	}
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(string(b)) == "" && !images {
		return "", errors.New("the prompt on stdin is empty")
	}
	return utf8Prompt(string(b))
}

// utf8Prompt is prompt when it is UTF-8 text, else an error saying where
// it is not and how to convert it.
func utf8Prompt(prompt string) (string, error) {
	if utf8.ValidString(prompt) {
		return prompt, nil
	}
	at := 0
	for at < len(prompt) {
		r, n := utf8.DecodeRuneInString(prompt[at:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		at += n
	}
	return "", fmt.Errorf("the prompt is not UTF-8 text (byte %#x at offset %d): darman reads prompts as UTF-8; convert it first (e.g. iconv -f latin1 -t utf-8 FILE | darman run)", prompt[at], at)
}

func (a *app) runTurn(ctx context.Context, o runOptions) error {
	// A person reads stderr: what they should know comes as the lines
	// below (! for a warning); log lines only when they asked for them.
	a.quietLogs = true
	// The terminal asks whether to trust the folder (the first time it
	// configures what needs trust), then the permission questions and
	// MCP servers' elicitations; without one, the folder stays untrusted
	// unless recorded or --trust, questions are refused and elicitations
	// declined.
	ta := terminal.Open(a.stderr)
	a.trustPolicy = trustPolicy{force: o.trust}
	if ta != nil {
		a.trustPolicy.ask = askTrust(ctx, ta)
	}
	loaded, err := a.config()
	if err != nil {
		return err
	}
	cfg := loaded.Config
	log, err := a.logger()
	if err != nil {
		return err
	}
	if n := a.trust.notice(); n != "" {
		fmt.Fprintln(a.stderr, "! "+n+" (or darman run --trust for this run)")
	}
	root, err := a.workspaceRoot()
	if err != nil {
		return err
	}
	// What needs neither the store nor the other runs while the store
	// opens: the sandbox's probe and the repository's facts for the
	// prompt (each a process of its own to wait for).
	sb := newSandbox(cfg)
	go sb.Status()
	handed := false
	defer func() {
		if !handed {
			sb.Status() // (the probe is done before Close reads it)
			sb.Close()
		}
	}()
	git := startGit(root)
	// The store opens beside the rest too: a new session's first model
	// request needs only what its turn wrote, which the early store keeps
	// until the store is open (see earlyStore).
	if cfg.DataDir == "" {
		return errNoDataDir
	}
	openCtx, dataDir := ctx, cfg.DataDir // (ctx is the turn's below)
	st := openEarly(func() (*store.Store, error) {
		return store.Open(openCtx, dataDir, store.Options{Logger: log})
	}, o.session == "" && !o.continueLast)
	a.cleanup(st.Close)
	// The terminal asks permission questions and MCP servers'
	// elicitations; without one, questions are refused and elicitations
	// declined.
	var asker permission.Asker
	var gate permission.Elicitor
	refused := &refusals{}
	if ta != nil {
		asker, gate = ta, ta
	}
	notices := func(level, text string) {
		if level != "info" {
			fmt.Fprintf(a.stderr, "! %s\n", text)
		}
	}
	w, err := openWorkspace(ctx, cfg, nil, workspaceOptions{root: root, workspace: tool.NewDisk(root), asker: asker, refused: refused.add, gate: gate, rules: o.rules,
		tasks: true, waitMCP: true, notices: notices, children: a.children, sandbox: sb, git: git, records: st}, log)
	handed = true
	if err != nil {
		return err
	}
	defer w.Close()
	svc, m := w.Sessions(), w.models
	// An unknown command fails before a session is made for it; the turn
	// runs a known one (Service.Start finds it, as in every front).
	command, _, err := svc.Commands().Invocation(o.prompt)
	if err != nil {
		return err
	}
	if st := w.sandbox.Status(); (!st.Active() || len(st.Missing) > 0) && st.Mode != sandbox.Off {
		fmt.Fprintln(a.stderr, "darman: "+st.Summary())
	}

	if o.agent != "" {
		// An unknown agent fails before a session is made for it.
		if a, ok := svc.Agents().Get(o.agent); !ok || !a.RunsWhenNamed() {
			if p, left := svc.Agents().ProblemOf(o.agent); !ok && left {
				return fmt.Errorf("--agent %q: its definition was left out: %s", o.agent, p)
			}
			return fmt.Errorf("--agent %q: not an agent a session runs; the agents are %s", o.agent, strings.Join(svc.Agents().Names(agents.Agent.Runs), ", "))
		}
	}
	id, err := a.pickSession(ctx, st, svc, root, m, o)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first interrupt ends the turn, whose last records wait for the
	// store: another darman may hold it and not let go, or its check be
	// long. A second one quits, as one did while the store opened before
	// the turn.
	ended := make(chan struct{})
	defer close(ended) // (before stop: no interrupt then)
	go func() {
		<-ctx.Done()
		stop()
		select {
		case <-ended:
		case <-st.ready:
		default:
			fmt.Fprintln(a.stderr, "darman: interrupted; the turn is saved once the session store opens (another darman holds it, or it is being checked): interrupt again to quit without saving it")
		}
	}()
	r := &terminal.Renderer{Out: a.stdout, Err: a.stderr, JSON: o.json}
	if ta != nil {
		// The terminal's questions come on the turn's stream, printed in
		// its order.
		r.Ask = ta
	}
	var parts []session.Part
	if strings.TrimSpace(o.prompt) != "" {
		parts = session.Text(o.prompt)
	}
	tn := session.Turn{Session: id, Prompt: append(parts, o.images...), Events: r.Render, Agent: o.agent, Questions: r.Ask != nil}
	res, err := svc.Run(ctx, tn)
	if err != nil {
		if command != nil {
			return commandFailed(command.Name, err)
		}
		return err
	}
	// The turn may have ended before the store opened (its records are
	// written as it does): a store that failed fails the turn, whose
	// answer was shown all the same.
	if _, serr := st.store(context.WithoutCancel(ctx)); serr != nil {
		res.Finish, res.Error, res.Err = agent.FinishError, serr.Error(), serr
		r.Result(res)
		return &exitError{code: 1, err: fmt.Errorf("the turn is not saved: %w", serr)}
	}
	r.Result(res)
	refused.tell(a.stderr)
	switch {
	case res.Finish == agent.FinishCancelled:
		fmt.Fprintf(a.stderr, "darman: interrupted; the turn is saved in session %s\n", id)
		return &exitError{code: 130}
	case res.Finish == agent.FinishError:
		if command != nil && res.Err != nil {
			if err := commandFailed(command.Name, res.Err); err != res.Err {
				return &exitError{code: 1, err: err}
			}
		}
		if !o.json {
			// The renderer printed the reason as the turn failed.
			return &exitError{code: 1, err: fmt.Errorf("the turn failed; it is saved in session %s (darman run -c goes on from it)", id)}
		}
		return &exitError{code: 1, err: fmt.Errorf("the turn failed: %s (session %s)", res.Error, id)}
	}
	return nil
}

// commandFailed explains a command that could not be expanded; a !`cmd`
// that needed permission where no one could be asked gets the flag that
// allows it. Any other error is returned as it is.
func commandFailed(name string, err error) error {
	var denied *permission.DeniedError
	if errors.As(err, &denied) && denied.Unattended {
		var flags []string
		for _, s := range denied.Subjects {
			flags = append(flags, allowFlag(denied.Permission, s))
		}
		return fmt.Errorf("command /%s runs %s, which needs your permission, and there is no terminal to ask: allow it for this run with %s",
			name, strings.Join(denied.Subjects, ", "), strings.Join(flags, " "))
	}
	return err
}

// pickSession is --session's session, the workspace's latest with
// --continue, or a new one.
func (a *app) pickSession(ctx context.Context, early *earlyStore, svc *session.Service, root string, m *models, o runOptions) (agent.ID, error) {
	if o.session != "" || o.continueLast {
		st, err := early.store(ctx)
		if err != nil {
			return "", err
		}
		if o.session != "" {
			return st.Resolve(ctx, o.session)
		}
		list, err := st.ListSessions(ctx, store.ListOptions{Workspace: root, Limit: 1})
		if err != nil {
			return "", err
		}
		if len(list) == 0 {
			return "", fmt.Errorf("--continue: no session in %s yet", root)
		}
		return list[0].ID, nil
	}
	sel, err := m.selectModel(ctx)
	if err != nil {
		return "", err
	}
	s, err := svc.Create(ctx, session.CreateOptions{Model: sel.Ref()})
	return s.ID, err
}
