package acp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/prompt"
	"github.com/darman-dev/darman/agent/session"
)

// The agents are slash commands too, for clients that show commands and
// not modes: /NAME of an agent a session runs switches the session to it
// (its mode) and sends the rest of the line, if any, as the prompt;
// /NAME of a sub-agent hands the rest of the line to it through the task
// tool. A workspace command or a checkpoint command of the same name
// wins.

// agentCommands are the agents offered as commands, but those whose name
// another command of the session takes.
func (ls *liveSession) agentCommands() []availableCommand {
	if ls.ag().Agents() == nil {
		return nil
	}
	var out []availableCommand
	for _, a := range ls.ag().Agents().List() {
		if ls.shadowed(a.Name) {
			continue
		}
		switch {
		case a.Runs():
			out = append(out, availableCommand{Name: a.Name, Description: "Switch to the " + a.Name + " agent: " + a.Description,
				Input: &commandInput{Hint: "what to ask the " + a.Name + " agent (optional)"}})
		case a.Sub():
			out = append(out, availableCommand{Name: a.Name, Description: "Hand a task to the " + a.Name + " sub-agent: " + a.Description,
				Input: &commandInput{Hint: "the task for the " + a.Name + " sub-agent"}})
		}
	}
	return out
}

// shadowed reports whether a workspace, built-in or checkpoint command
// has name.
func (ls *liveSession) shadowed(name string) bool {
	if _, ok := ls.ag().Sessions().Commands().Get(name); ok {
		return true
	}
	return slices.ContainsFunc(ls.checkpointCommandsOf(), func(c availableCommand) bool { return c.Name == name })
}

// commands are every command the session offers, for
// available_commands_update: the workspace's and the built-in ones, the
// checkpoint commands and the agents.
func (ls *liveSession) commands() []availableCommand {
	out := []availableCommand{}
	for _, c := range ls.ag().Sessions().Commands().List() {
		ac := availableCommand{Name: c.Name, Description: c.Description}
		if ac.Description == "" {
			ac.Description = "the workspace's /" + c.Name + " command"
		}
		if c.ArgumentHint != "" {
			ac.Input = &commandInput{Hint: c.ArgumentHint}
		}
		out = append(out, ac)
	}
	out = append(out, ls.checkpointCommandsOf()...)
	return append(out, ls.agentCommands()...)
}

// subAgentTask is the prompt /NAME TEXT sends for a sub-agent NAME.
const subAgentTask = "Use the task tool with agent %q for this task, and report what it found:\n\n%s"

// agentCommand reads a prompt's first text that starts with /NAME for an
// agent. For an agent a session runs, the session switches to it (the
// client hears current_mode_update) and the rest of the text is what is
// sent; done is set when nothing is left to send. For a sub-agent, the
// text asks for the task tool with it. ok is false when the text names no
// agent command.
func (ls *liveSession) agentCommand(ctx context.Context, text string) (rewritten string, ok, done bool, err error) {
	name, rest, isCmd := prompt.ParseInvocation(text)
	if !isCmd || ls.ag().Agents() == nil || ls.shadowed(name) {
		return "", false, false, nil
	}
	a, found := ls.ag().Agents().Get(name)
	if !found {
		return "", false, false, nil
	}
	if a.Runs() {
		if err := ls.switchBetweenTurns(ctx, a.Name); err != nil {
			return "", true, false, err
		}
		return rest, true, rest == "", nil
	}
	if rest == "" {
		return "", true, false, invalidParams("session/prompt: /%s hands a task to the %s sub-agent: write the task after the command", name, name)
	}
	return fmt.Sprintf(subAgentTask, a.Name, rest), true, false, nil
}

// switchBetweenTurns switches the session to agent name unless it runs a
// turn (whose agent must not change under it).
func (ls *liveSession) switchBetweenTurns(ctx context.Context, name string) error {
	err := ls.ag().Sessions().Between(ctx, ls.id, func() error { return ls.switchAgent(ctx, name) })
	if errors.Is(err, session.ErrBusy) {
		return invalidParams("session/prompt: session %s is already running a turn; cancel it or wait for its answer", ls.id)
	}
	return err
}

// switchAgent makes name the session's agent as session/set_mode does,
// keeping the permission mode, and tells the client.
func (ls *liveSession) switchAgent(ctx context.Context, name string) error {
	if err := ls.setAgent(ctx, name); err != nil {
		return err
	}
	ls.send(update{SessionUpdate: "current_mode_update", CurrentModeID: ls.currentModeID()})
	return nil
}

// watchAgents looks at the agent files of e's directory every agents.RefreshInterval
// until the server closes, and tells its sessions when they changed.
func (s *Server) watchAgents(e *agentEntry) {
	s.mu.Lock()
	ag := e.agent // set under s.mu
	if s.watching == nil {
		s.watching = map[*agentEntry]bool{}
	}
	if ag == nil || ag.Agents() == nil || s.watching[e] || s.closing {
		s.mu.Unlock()
		return
	}
	s.watching[e] = true
	stop := s.stopWatch
	s.watchers.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.watchers.Done()
		tick := time.NewTicker(agents.RefreshInterval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				s.mu.Lock()
				ag := e.agent // replaced when the folder is trusted
				s.mu.Unlock()
				s.refreshAgents(context.WithoutCancel(s.c.ctx), ag)
			}
		}
	}()
}

// refreshAgents reads ag's agent files again if they changed, and then
// sends each of its sessions its modes and commands as they now are.
func (s *Server) refreshAgents(ctx context.Context, ag *started) {
	if ag.Agents() == nil || !ag.Agents().Refresh() {
		return
	}
	s.mu.Lock()
	var live []*liveSession
	for _, ls := range s.sessions {
		if ls.ag() == ag {
			live = append(live, ls)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(live, func(a, b *liveSession) int { return cmp.Compare(a.id, b.id) })
	for _, ls := range live {
		ls.agentsChanged(ctx)
	}
}

// agentsChanged sends the session its modes (config_option_update: ACP
// has no update of session/new's availableModes), its commands, and
// current_mode_update when its agent went away (it runs build then).
func (ls *liveSession) agentsChanged(ctx context.Context) {
	ls.mu.Lock()
	name := ls.agentName
	ls.mu.Unlock()
	if name != "" && name != agents.Build {
		if a, ok := ls.ag().Agents().Get(name); !ok || !a.Runs() {
			if err := ls.setAgent(ctx, agents.Build); err == nil {
				ls.send(update{SessionUpdate: "current_mode_update", CurrentModeID: ls.currentModeID()})
			}
		}
	}
	ls.send(update{SessionUpdate: "config_option_update", ConfigOptions: ls.configOptions(ctx)})
	ls.send(update{SessionUpdate: "available_commands_update", AvailableCommands: ls.commands()})
}

// agentPrompt applies an agent command at the start of the prompt's
// first part, when it is typed text; the other parts (files, images) go
// with it unchanged. done is set when the command was all there was to
// do.
func (ls *liveSession) agentPrompt(ctx context.Context, parts []session.Part) (out []session.Part, done bool, err error) {
	if len(parts) == 0 || parts[0].File != "" || parts[0].Image != nil {
		return parts, false, nil
	}
	text, ok, done, err := ls.agentCommand(ctx, parts[0].Text)
	if !ok || err != nil || done && len(parts) == 1 {
		return parts, ok && (err != nil || done), err
	}
	out = slices.Clone(parts)
	out[0].Text = text
	return out, false, nil
}
