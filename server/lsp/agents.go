package lsp

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/server/rpc"
)

// agentsState is the workspace's named agents as the server knows them.
type agentsState struct {
	mu      sync.Mutex
	catalog *agents.Catalog
	// last is the agent each session's latest prompt named, for the plan
	// → build hand-off code action.
	last map[agent.ID]string
	// stored is what the last look at the store found of the
	// workspace's recent sessions (handoff.go): true for a session whose
	// plan can be handed to build, false for one whose cannot (another
	// connection ran build in it since, or runs a turn in it now).
	stored map[agent.ID]bool
}

// agentInfo is one agent as initialize and darman/agentsChanged list it.
type agentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Mode        string `json:"mode"`
	Source      string `json:"source,omitempty"`
}

// agentsChangedParams are darman/agentsChanged's params.
type agentsChangedParams struct {
	Agents []agentInfo `json:"agents"`
}

// loadAgents finds the workspace's agents while initialize is answered
// (Options.Agents; the built-in agents alone without it).
func (s *Server) loadAgents(ctx context.Context, setup Setup) *agents.Catalog {
	var c *agents.Catalog
	if s.opts.Agents != nil {
		c = s.opts.Agents(ctx, setup)
	}
	s.agents.mu.Lock()
	s.agents.catalog = c
	s.agents.mu.Unlock()
	return s.catalog()
}

func (s *Server) catalog() *agents.Catalog {
	s.agents.mu.Lock()
	defer s.agents.mu.Unlock()
	if s.agents.catalog == nil {
		s.agents.catalog = agents.Load(agents.Options{})
	}
	return s.agents.catalog
}

func agentInfos(c *agents.Catalog) []agentInfo {
	out := []agentInfo{}
	for _, a := range c.List() {
		out = append(out, agentInfo{Name: a.Name, Description: a.Description, Mode: string(a.Mode), Source: a.Source})
	}
	return out
}

// watchAgents tells the client when the agent files change, until the
// server stops.
func (s *Server) watchAgents() {
	s.goOwned(func() {
		tick := time.NewTicker(agents.RefreshInterval)
		defer tick.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-tick.C:
				s.refreshAgents()
				s.refreshHandoffs(s.ctx)
			}
		}
	})
}

// refreshAgents reads the agent files again if they changed, and sends
// darman/agentsChanged when the list did.
func (s *Server) refreshAgents() {
	c := s.catalog()
	if !c.Refresh() {
		return
	}
	if err := s.conn.Notify(s.ctx, "darman/agentsChanged", agentsChangedParams{Agents: agentInfos(c)}); err != nil {
		s.log.Debug("lsp: darman/agentsChanged not sent", "err", err)
	}
}

// notePromptAgent remembers the agent a session's prompt named.
func (s *Server) notePromptAgent(id agent.ID, name string) {
	s.agents.mu.Lock()
	defer s.agents.mu.Unlock()
	if s.agents.last == nil {
		s.agents.last = map[agent.ID]string{}
	}
	s.agents.last[id] = name
	// Newer than what the store said at the last look.
	delete(s.agents.stored, id)
}

// handoffPrompt is what the plan → build hand-off sends to build, in the
// session that holds the plan.
const handoffPrompt = "Carry out the plan from your previous answer (written by the plan agent): make the changes it describes, in its order, and test them."

// handoffSessions are the sessions whose latest prompt ran the plan agent
// and that run no turn now: the plan is there to hand to build. They are
// this connection's, and those any connection to the same store planned
// (handoff.go).
func (s *Server) handoffSessions() []agent.ID {
	running := map[agent.ID]bool{}
	for _, t := range s.runningTurns() {
		running[t.session] = true
	}
	s.agents.mu.Lock()
	defer s.agents.mu.Unlock()
	var out []agent.ID
	for id, name := range s.agents.last {
		if ok, seen := s.agents.stored[id]; name == agents.Plan && !running[id] && (ok || !seen) {
			out = append(out, id)
		}
	}
	for id, ok := range s.agents.stored {
		if ok && !running[id] && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// currentAgent is the agent of a session for darman.status: the one its
// stored record names, build when none.
func currentAgent(ctx context.Context, st Store, id agent.ID) string {
	if sess, err := st.Session(ctx, id); err == nil && sess.Agent != "" {
		return sess.Agent
	}
	return agents.Build
}

// checkPromptAgent refuses, as darman.prompt's invalid params, an agent
// name no session can run, after looking at the agent files again.
func (s *Server) checkPromptAgent(name string) error {
	if name == "" {
		return nil
	}
	s.refreshAgents()
	c := s.catalog()
	if a, ok := c.Get(name); !ok || !a.RunsWhenNamed() {
		return rpc.InvalidParams("darman.prompt: agent %q is not an agent a session runs; the agents are %s", name, strings.Join(c.Names(agents.Agent.Runs), ", "))
	}
	return nil
}

// agentOf is darman.status's currentAgent: the agent of the session named
// (build for a new one).
func agentOf(ctx context.Context, ag *Agent, id string) string {
	if id == "" {
		return agents.Build
	}
	return currentAgent(ctx, ag.Store, agent.ID(id))
}

func handoffTitle(id agent.ID) string {
	return "darman: carry out the plan with build (" + string(id) + ")"
}

// handoffCommand sends the plan, in its session, to the build agent.
func handoffCommand(id agent.ID) protocol.Command {
	return protocol.Command{Title: handoffTitle(id), Command: "darman.prompt",
		Arguments: []any{promptArgs{SessionID: string(id), Prompt: handoffPrompt, Agent: agents.Build}}}
}
