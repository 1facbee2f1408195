package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/bus"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/sandbox"
)

func (a *app) runCommand() *cobra.Command {
	var (
		sessionArg   string
		continueLast bool
		format       string
		allow, deny  []string
	)
	cmd := &cobra.Command{
		Use:   "run [prompt | /command [arguments]]",
		Short: "Run one turn of the agent in the current workspace, from the shell",
		Long: `run sends a prompt to the agent in the current workspace and streams the
answer to stdout (tool calls as one-line summaries on stderr), or every event
as a JSON line with --format json. The prompt is the arguments, or stdin when
there are none.

A prompt that starts with /name runs the command called name: a Markdown
template in .darman/command/name.md (or the user's command/ directory, or
.claude/commands/), given the words after the name as its arguments, with
@file and !` + "`cmd`" + ` expanded (commands run under the bash permission). Its
front matter's model, when set, is the model of that turn:

  darman run /review internal/config/load.go

Permissions the rules leave open are asked on the terminal; without one they
are rejected, and the model is told why. --allow and --deny add rules for
this run: "edit", "bash:go test *".

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
			prompt, err := readPrompt(args)
			if err != nil {
				return err
			}
			return a.runTurn(cmd.Context(), runOptions{session: sessionArg, continueLast: continueLast, json: format == "json", rules: extra, prompt: prompt})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&sessionArg, "session", "s", "", "continue this session")
	f.BoolVarP(&continueLast, "continue", "c", false, "continue the workspace's most recent session")
	f.StringVar(&format, "format", "text", "text or json (one event per line)")
	f.StringArrayVar(&allow, "allow", nil, `allow a permission for this run: "edit", "bash:go test *" (repeatable)`)
	f.StringArrayVar(&deny, "deny", nil, `deny a permission for this run (repeatable)`)
	return cmd
}

type runOptions struct {
	session      string
	continueLast bool
	json         bool
	rules        []permission.Rule
	prompt       string
}

func readPrompt(args []string) (string, error) {
	if len(args) > 0 {
		return strings.Join(args, " "), nil
	}
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return "", errors.New("no prompt: give it as an argument (darman run \"fix the failing test\") or on stdin")
	}
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", errors.New("the prompt on stdin is empty")
	}
	return string(b), nil
}

func (a *app) runTurn(ctx context.Context, o runOptions) error {
	loaded, err := a.config()
	if err != nil {
		return err
	}
	cfg := loaded.Config
	log, err := a.logger()
	if err != nil {
		return err
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	root, err := a.workspaceRoot()
	if err != nil {
		return err
	}
	var asker permission.Asker
	if ta := newTerminalAsker(a.stderr); ta != nil {
		asker = ta
	}
	var command *prompt.Command
	name, cmdArgs, isCommand := commandRef(o.prompt)
	if isCommand {
		cmds := prompt.LoadCommands(prompt.LocateDirs(root, nil))
		c, ok := cmds.Get(name)
		if !ok {
			return unknownCommand(name, cmds)
		}
		command = &c
	}
	rt, err := startAgent(ctx, cfg, st, agentWiring{root: root, workspace: tool.NewDisk(root), asker: asker, rules: o.rules, tasks: true, waitMCP: true, children: a.children}, log)
	if err != nil {
		return err
	}
	defer rt.close()
	svc, m := rt.svc, rt.models
	if st := rt.sandbox.Status(); !st.Active() && st.Mode != sandbox.Off {
		fmt.Fprintln(a.stderr, "darman: "+st.Summary())
	}

	id, err := a.pickSession(ctx, st, svc, root, m, o)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	text, turn := o.prompt, session.PromptOptions{}
	if command != nil {
		text, err = command.Expand(ctx, cmdArgs, prompt.ExpandOptions{
			Root: root,
			Run: func(ctx context.Context, line string) (string, error) {
				return svc.Shell(ctx, id, line)
			},
		})
		if err != nil {
			return commandFailed(command.Name, err)
		}
		turn.Model = command.Model
	}
	sub, err := svc.Subscribe(ctx, id)
	if err != nil {
		return err
	}
	rendered := make(chan struct{})
	go func() {
		defer close(rendered)
		r := &renderer{out: a.stdout, errw: a.stderr, json: o.json}
		for d := range sub.C() {
			r.render(d)
			// A sub-task's turn ends inside the parent's: only the
			// parent's end ends the rendering.
			if d.Event.Kind == agent.EventState && d.Event.ParentCallID == "" && (d.Event.State == agent.StateIdle || d.Event.State == agent.StateFailed) {
				return
			}
		}
	}()
	msg, err := svc.PromptWith(ctx, id, text, turn)
	if err != nil {
		sub.Unsubscribe()
		<-rendered
		return err
	}
	<-rendered
	sub.Unsubscribe()
	switch {
	case msg.Finish == agent.FinishCancelled:
		fmt.Fprintf(a.stderr, "darman: interrupted; the turn is saved in session %s\n", id)
		return &exitError{code: 130}
	case msg.Finish == agent.FinishError:
		return &exitError{code: 1, err: fmt.Errorf("the turn failed: %s (session %s)", msg.Error, id)}
	}
	return nil
}

// commandRef splits a prompt that names a command, "/name arguments...".
// The slash must be the prompt's first character, and a first word with
// another slash is a path ("/usr/bin/env fails"): such prompts are sent as
// they are.
func commandRef(text string) (name, args string, ok bool) {
	text = strings.TrimRightFunc(text, unicode.IsSpace)
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	word, rest := text, ""
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		word, rest = text[:i], strings.TrimSpace(text[i:])
	}
	name = word[1:]
	if name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return name, rest, true
}

// unknownCommand says that /name is not a command, and which are.
func unknownCommand(name string, cmds *prompt.Commands) error {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown command /%s", name)
	list := cmds.List()
	if len(list) == 0 {
		fmt.Fprintf(&b, ": no commands are defined here. A command is a Markdown file such as .darman/command/%s.md in the project; "+
			"to send a prompt that starts with a slash, put a space before it", name)
	} else {
		b.WriteString("; the commands here are:")
		for _, c := range list {
			fmt.Fprintf(&b, "\n  /%s", c.Name)
			if c.ArgumentHint != "" {
				b.WriteString(" " + c.ArgumentHint)
			}
			if c.Description != "" {
				b.WriteString("  — " + c.Description)
			}
		}
	}
	for _, p := range cmds.Problems {
		fmt.Fprintf(&b, "\n(skipped %s)", p)
	}
	return errors.New(b.String())
}

// commandFailed explains a command that could not be expanded; a !`cmd`
// that needed permission where no one could be asked gets the flag that
// allows it.
func commandFailed(name string, err error) error {
	var denied *permission.DeniedError
	if errors.As(err, &denied) && denied.Unattended {
		var flags []string
		for _, s := range denied.Subjects {
			flags = append(flags, fmt.Sprintf("--allow %q", denied.Permission+":"+s))
		}
		return fmt.Errorf("command /%s runs %s, which needs your permission, and there is no terminal to ask: allow it for this run with %s",
			name, strings.Join(denied.Subjects, ", "), strings.Join(flags, " "))
	}
	return err
}

// pickSession is --session's session, the workspace's latest with
// --continue, or a new one.
func (a *app) pickSession(ctx context.Context, st *store.Store, svc *session.Service, root string, m *models, o runOptions) (agent.ID, error) {
	switch {
	case o.session != "":
		return st.Resolve(ctx, o.session)
	case o.continueLast:
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

// renderer prints a session's events for a shell.
type renderer struct {
	out, errw io.Writer
	json      bool
	midLine   bool // the answer text did not end with a newline yet
}

func (r *renderer) render(d bus.Delivery[agent.Event]) {
	e := d.Event
	if r.json {
		b, _ := json.Marshal(struct {
			Seq   uint64      `json:"seq"`
			Event agent.Event `json:"event"`
		}{d.Seq, e})
		fmt.Fprintf(r.out, "%s\n", b)
		return
	}
	// A sub-task's events are nested under its task call: its tool calls
	// and failure are shown indented; its text is not, since the sub-agent
	// answers the parent, which answers the user.
	nest := ""
	if e.ParentCallID != "" {
		nest = "  ↳ "
	}
	switch e.Kind {
	case agent.EventMessageChunk:
		if nest != "" {
			return
		}
		fmt.Fprint(r.out, e.Text)
		r.midLine = !strings.HasSuffix(e.Text, "\n")
	case agent.EventToolCallUpdate:
		t := e.Tool
		if t.Status != agent.ToolCompleted && t.Status != agent.ToolFailed {
			return
		}
		r.endLine()
		line := "✓ " + t.Name
		if t.Title != "" {
			line += " " + t.Title
		}
		if t.Status == agent.ToolFailed {
			line = "✗ " + t.Name + " " + t.Title + ": " + firstLine(t.Error)
		}
		fmt.Fprintln(r.errw, nest+line)
	case agent.EventRetry:
		r.endLine()
		fmt.Fprintf(r.errw, "%s… retrying in %s: %s\n", nest, e.Retry.Delay.Round(100_000_000), e.Retry.Reason)
	case agent.EventState:
		if e.State == agent.StateIdle || e.State == agent.StateFailed {
			r.endLine()
		}
		if e.State == agent.StateFailed {
			fmt.Fprintf(r.errw, "%s✗ %s\n", nest, e.Reason)
		}
	}
}

func (r *renderer) endLine() {
	if r.midLine {
		fmt.Fprintln(r.out)
		r.midLine = false
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
