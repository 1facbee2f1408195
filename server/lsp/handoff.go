package lsp

import (
	"context"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/store"
)

// handoffScan is how many of the workspace's most recent sessions a look
// at the store reads for plans to hand to build.
const handoffScan = 20

// refreshHandoffs looks in the store, which every darman of this data
// directory shares, for the workspace's sessions whose plan the
// hand-off code action can send to build: the session's agent is plan and
// its last message is a finished answer with text. So a plan made in one
// editor is offered in another attached to the same workspace. It runs
// beside the agent-file poll, never in a request: code actions do not
// wait on the store.
func (s *Server) refreshHandoffs(ctx context.Context) {
	ag, err := s.agent.peek()
	if err != nil {
		return
	}
	list, err := ag.Store.ListSessions(ctx, store.ListOptions{Workspace: s.root, Limit: handoffScan})
	if err != nil {
		s.log.Debug("lsp: hand-off: cannot list the sessions", "err", err)
		return
	}
	found := make(map[agent.ID]bool, len(list))
	for _, sess := range list {
		found[sess.ID] = sess.Agent == agents.Plan && s.planAnswered(ctx, ag, sess.ID)
	}
	s.agents.mu.Lock()
	s.agents.stored = found
	s.agents.mu.Unlock()
}

// planAnswered reports whether a session's last message is a finished
// answer with text: the plan, with no turn running after it.
func (s *Server) planAnswered(ctx context.Context, ag *Agent, id agent.ID) bool {
	page, err := ag.Store.Page(ctx, id, store.PageOptions{Limit: 1})
	if err != nil || len(page.Messages) == 0 {
		return false
	}
	last := page.Messages[len(page.Messages)-1]
	if last.Message.Role != agent.RoleAssistant || last.Message.Finish != agent.FinishStop {
		return false
	}
	for _, p := range last.Parts {
		if p.Kind == agent.PartText && p.Text != "" {
			return true
		}
	}
	return false
}
