package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/tool"
)

// Agents are the service's named agents (Options.Agents, or the built-in
// build and plan alone).
func (s *Service) Agents() *agents.Catalog { return s.catalog }

// Agent is the name of the session's current agent: the one its next turn
// runs when the turn names none.
func (s *Service) Agent(ctx context.Context, id agent.ID) (string, error) {
	sess, err := s.opts.Store.Session(ctx, id)
	if err != nil {
		return "", err
	}
	if sess.Agent == "" {
		return agents.Build, nil
	}
	return sess.Agent, nil
}

// SetAgent makes name the session's current agent (darman acp's
// session/set_mode, an editor's picker). It fails for an agent that is
// unknown or runs only as a sub-agent.
func (s *Service) SetAgent(ctx context.Context, id agent.ID, name string) error {
	if _, err := s.primaryAgent(name, agents.Agent.Runs); err != nil {
		return err
	}
	return s.setSessionAgent(ctx, id, name)
}

func (s *Service) setSessionAgent(ctx context.Context, id agent.ID, name string) error {
	s.records.Lock()
	defer s.records.Unlock()
	sess, err := s.opts.Store.Session(ctx, id)
	if err != nil {
		return err
	}
	if isAgent(sess.Agent, name) {
		return nil
	}
	sess.Agent = name
	return s.opts.Store.PutSession(ctx, sess)
}

// isAgent says whether a session whose record names agent stored runs
// agent name ("" is build).
func isAgent(stored, name string) bool {
	return stored == name || stored == "" && name == agents.Build
}

// primaryAgent finds an agent a session's turn may run, as runs says
// (Agent.Runs for a picker's choice, Agent.RunsWhenNamed for a turn the
// user named it for).
func (s *Service) primaryAgent(name string, runs func(agents.Agent) bool) (agents.Agent, error) {
	a, ok := s.catalog.Get(name)
	switch {
	case !ok:
		return agents.Agent{}, fmt.Errorf("agent %q: there is no agent of that name; the agents are %s", name,
			strings.Join(s.catalog.Names(agents.Agent.Runs), ", "))
	case !runs(a):
		return agents.Agent{}, fmt.Errorf("agent %q runs only as a sub-agent of the task tool (mode: %s); the agents a session runs are %s",
			name, a.Mode, strings.Join(s.catalog.Names(agents.Agent.Runs), ", "))
	}
	return a, nil
}

// turnAgent is the agent a turn of sess runs: named, else the
// session's current one. Start makes a named agent the session's current
// one once the turn has begun.
func (s *Service) turnAgent(sess agent.Session, named string) (agents.Agent, error) {
	if named == "" {
		cur := sess.Agent
		if cur == "" {
			cur = agents.Build
		}
		a, err := s.primaryAgent(cur, agents.Agent.RunsWhenNamed)
		if err != nil {
			// The session's agent file is gone: its turns go on with build.
			s.log.Warn("the session's agent is gone; running build", "session", sess.ID, "agent", cur, "err", err)
			return s.primaryAgent(agents.Build, agents.Agent.Runs)
		}
		return a, nil
	}
	return s.primaryAgent(named, agents.Agent.RunsWhenNamed)
}

// subAgent is the agent a task call runs: named (one the task tool may
// run), else a general one with the parent's tools. Either keeps the
// parent agent's lock, so a sub-task of plan cannot edit either.
func (s *Service) subAgent(name string, parent agents.Agent) (agents.Agent, string) {
	a := agents.Agent{Name: "general", Mode: agents.Subagent}
	if name != "" {
		found, ok := s.catalog.Get(name)
		if !ok || !found.Sub() {
			return agents.Agent{}, fmt.Sprintf("There is no sub-agent named %q. The sub-agents are: %s. Call task again with one of them, or without agent for a general one.",
				name, strings.Join(s.subAgentNames(), ", "))
		}
		a = found
	}
	a.Lock = slices.Concat(a.Lock, parent.Lock)
	return a, ""
}

func (s *Service) subAgentNames() []string {
	return s.catalog.Names(func(a agents.Agent) bool { return a.Sub() && a.Name != agents.Build && a.Name != agents.Plan })
}

// agentTools are the tools the turn's agent may use, of tools.
func (t *turn) agentTools(tools []tool.Tool) []tool.Tool {
	if t.agent.Tools == nil && len(t.agent.Lock) == 0 {
		return tools
	}
	return slices.DeleteFunc(slices.Clone(tools), func(tl tool.Tool) bool { return !t.agent.Allows(tl.Info().Name) })
}

// refused is, for a call of a tool the turn's agent may not use, the
// result the model reads; "" when the agent may use it.
func (t *turn) refused(name string) string {
	if t.agent.Allows(name) {
		return ""
	}
	var names []string
	for _, tl := range t.tools {
		names = append(names, tl.Info().Name)
	}
	return fmt.Sprintf("The %s agent may not use the %s tool: its tools are %s. Do the task with those, or say what you would need.",
		t.agentName(), name, strings.Join(names, ", "))
}

func (t *turn) agentName() string {
	if t.agent.Name == "" {
		return agents.Build
	}
	return t.agent.Name
}

// systemFor adds the agent's instructions to the system prompt.
func (t *turn) systemFor(system string) string {
	if t.agent.Prompt == "" {
		return system
	}
	return system + "\n\n# Agent: " + t.agentName() + "\n\n" + t.agent.Prompt
}

// maxSteps caps the turn's model calls: the agent's limit, else the
// service's.
func (t *turn) maxSteps() int {
	if t.agent.MaxSteps > 0 {
		return t.agent.MaxSteps
	}
	return t.svc.opts.MaxSteps
}

// taskDescriptionFor is the task tool's description with the sub-agents
// the model may choose and what each is for.
func (s *Service) taskDescriptionFor() string {
	var b strings.Builder
	b.WriteString(taskDescription)
	first := true
	for _, a := range s.catalog.List() {
		if !a.Sub() || a.Name == agents.Build || a.Name == agents.Plan {
			continue
		}
		if first {
			b.WriteString("\n\nSub-agents you may name in agent (omit agent for a general one with your tools):\n")
			first = false
		}
		fmt.Fprintf(&b, "- %s: %s\n", a.Name, a.Description)
	}
	return b.String()
}

// addChildCost adds a sub-task's usage and cost to its parent's session
// record and to the parent turn's result: what the sub-agent spent is
// spent by the parent's session.
func (t *turn) addChildCost(ctx context.Context, u agent.Usage, cost float64) {
	if u == (agent.Usage{}) && cost == 0 {
		return
	}
	t.updateSession(ctx, func(s *agent.Session) { s.Usage = s.Usage.Add(u); s.Cost += cost })
	t.answer.mu.Lock()
	t.answer.usage, t.answer.cost = t.answer.usage.Add(u), t.answer.cost+cost
	t.answer.mu.Unlock()
}
