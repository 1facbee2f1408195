package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/prompt"
)

// The built-in commands are darman's own, in the catalog beside the
// workspace's command files (Service.Commands), so every front offers
// them and runs them the same way: Start runs one as a turn of its own
// that makes no model call (but /compact's summary) and stores no
// message; its answer is published as the turn's text (Result.Text). A
// command file of the same name takes a built-in's place.
var builtins = []prompt.Command{
	{Name: "new", Description: "Start a new session with this one's model and agent; the panel switches to it (this one is kept)", Origin: prompt.Builtin},
	{Name: "help", Description: "List the commands you can run here", Origin: prompt.Builtin},
	{Name: "clear", Description: "Start the conversation afresh in this session: the model is sent nothing said before (the transcript keeps it)", Origin: prompt.Builtin},
	{Name: "compact", Description: "Summarize the conversation so far, so that the next turns send the model the summary instead", Origin: prompt.Builtin},
	{Name: "model", Description: "Show the session's model, or switch the session to another", ArgumentHint: "[provider/model-id]", Origin: prompt.Builtin},
}

// Commands are the commands a prompt can run by /name: the workspace's
// command files, read again now (Options.Commands), and the built-in
// ones. Every front lists these (darman.command.list, ACP's
// available_commands) and Start runs them.
func (s *Service) Commands() *prompt.Commands {
	var files *prompt.Commands
	if s.opts.Commands != nil {
		files = s.opts.Commands()
	}
	return files.With(builtins...)
}

// startBuiltin begins the turn of a built-in command typed in sess.
func (s *Service) startBuiltin(ctx context.Context, tn Turn, sess agent.Session, typed string, began time.Time) (*Running, error) {
	name, args := tn.Command.Name, strings.TrimSpace(tn.Args)
	if args != "" && name != "model" {
		return nil, fmt.Errorf("/%s takes no arguments; got %q", name, args)
	}
	l, err := s.get(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	t := &turn{svc: s, live: l, id: sess.ID, sess: sess, ws: s.workspaceOf(sess.ID), label: tn.ID, typed: typed}
	switch name {
	case "help":
		t.builtin = func(context.Context) (string, error) { return helpText(s.Commands()), nil }
	case "clear":
		t.builtin = t.clear
	case "new":
		t.builtin = t.newSession
	case "model":
		t.builtin = func(ctx context.Context) (string, error) { return t.switchModel(ctx, args) }
	case "compact":
		if err := t.prepare(sess); err != nil {
			return nil, err
		}
		t.builtin = t.compactNow
	default:
		return nil, fmt.Errorf("/%s is not one of darman's built-in commands", name)
	}
	return s.launch(ctx, tn, t, typed, began)
}

// runBuiltin is the whole of a built-in command's turn: the typed command
// as the user's message (not stored), the command's answer as the turn's
// text, and the end.
func (t *turn) runBuiltin(ctx context.Context) agent.Message {
	t.publish(agent.Event{Kind: agent.EventUserMessage, Text: t.typed})
	t.publish(agent.Event{Kind: agent.EventState, State: agent.StateRunning})
	reply, err := t.builtin(ctx)
	if err != nil || ctx.Err() != nil {
		return t.endUnstarted(ctx, err)
	}
	t.publish(agent.Event{Kind: agent.EventMessageChunk, MessageID: agent.NewMessageID(), PartID: agent.NewPartID(), Text: reply})
	t.end(agent.Event{Kind: agent.EventState, State: agent.StateIdle, Reason: string(agent.FinishStop)})
	return agent.Message{SessionID: t.id, Role: agent.RoleAssistant, Finish: agent.FinishStop}
}

// helpText lists the commands, as /help answers.
func helpText(c *prompt.Commands) string {
	var b strings.Builder
	b.WriteString("The commands here (type /name and its arguments):\n")
	for _, cmd := range c.List() {
		b.WriteString("\n- /" + cmd.Name)
		if cmd.ArgumentHint != "" {
			b.WriteString(" " + cmd.ArgumentHint)
		}
		if cmd.Description != "" {
			b.WriteString(" — " + cmd.Description)
		}
		if cmd.Origin != prompt.Builtin {
			b.WriteString(" (" + cmd.Path + ")")
		}
	}
	for _, p := range c.Problems {
		b.WriteString("\n\nSkipped " + p.String())
	}
	b.WriteString("\n\nA command of your own is a Markdown file such as .darman/command/review.md: its text is sent as the prompt, $ARGUMENTS replaced by what follows the name.")
	return b.String()
}

// switchModel is /model: with no ref, the session's model; with one, the
// session talks to it from now on.
func (t *turn) switchModel(ctx context.Context, ref string) (string, error) {
	if ref == "" {
		return fmt.Sprintf("This session talks to %s. Switch it with /model provider/model-id.", t.sess.Model), nil
	}
	if _, _, err := t.svc.opts.Models(ref); err != nil {
		return "", fmt.Errorf("/model %s: %w", ref, err)
	}
	t.updateSession(ctx, func(s *agent.Session) { s.Model = ref })
	return fmt.Sprintf("This session talks to %s from now on (it was %s).", ref, t.sess.Model), nil
}

// newSession is /new: a session of the workspace with this one's model
// and agent, announced (EventNewSession) for the fronts to switch to.
func (t *turn) newSession(ctx context.Context) (string, error) {
	fresh, err := t.svc.Create(context.WithoutCancel(ctx), CreateOptions{Model: t.sess.Model, Agent: t.sess.Agent})
	if err != nil {
		return "", fmt.Errorf("/new: %w", err)
	}
	t.publish(agent.Event{Kind: agent.EventNewSession, NewSession: fresh.ID})
	return fmt.Sprintf("Started session %s (%s); this one is kept: open it again from the session list.", fresh.ID, fresh.Model), nil
}

// clear is /clear: a cleared marker (a compaction part without a
// summary) that the history sent to the model starts after.
func (t *turn) clear(ctx context.Context) (string, error) {
	ctx = context.WithoutCancel(ctx)
	now := time.Now().UTC()
	m := agent.Message{ID: agent.NewMessageID(), SessionID: t.id, Role: agent.RoleUser, Created: now, Completed: now}
	if err := t.svc.opts.Store.PutMessage(ctx, m); err != nil {
		return "", err
	}
	meta, _ := json.Marshal(compactionMeta{Cleared: true})
	if err := t.svc.opts.Store.PutPart(ctx, agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: t.id, Kind: agent.PartCompaction,
		Started: now, Ended: now, Metadata: meta}); err != nil {
		return "", err
	}
	t.forgetWindow()
	return "The conversation starts afresh: the model is sent nothing said before this. The transcript keeps it.", nil
}

// compactNow is /compact: the conversation summarized now, as when it no
// longer fits the context window.
func (t *turn) compactNow(ctx context.Context) (string, error) {
	msgs, err := t.svc.opts.Store.Window(ctx, t.id)
	if err != nil {
		return "", err
	}
	if !hasConversation(msgs) {
		return "There is nothing to compact yet.", nil
	}
	if err := t.summarize(ctx, msgs, estimate(msgs, nil, 0)); err != nil {
		return "", errors.New("/compact: " + err.Error())
	}
	return fmt.Sprintf("The conversation so far (%d messages) is summarized: the next turns send the model the summary instead.", len(msgs)), nil
}

// hasConversation reports whether msgs hold anything said but a
// compaction.
func hasConversation(msgs []agent.MessageWithParts) bool {
	for _, m := range msgs {
		if compactionPart(m) == nil && len(m.Parts) > 0 {
			return true
		}
	}
	return false
}
