package acp

import (
	"context"
	"slices"

	"github.com/darman-dev/darman/agent/agents"
)

// A session's modes are the three permission modes, which run the build
// agent, and the other primary agents (plan, the workspace's): choosing
// an agent keeps the permission mode, choosing a permission mode goes
// back to build. currentModeId is the agent when it is not build.

// agentModes are the primary agents offered as modes, but build (the
// permission modes are build's) and any whose name is a permission mode's.
func (ls *liveSession) agentModes() []sessionMode {
	if ls.ag().Agents() == nil {
		return nil
	}
	var out []sessionMode
	for _, a := range ls.ag().Agents().List() {
		if !a.Runs() || a.Name == agents.Build || validMode(a.Name) {
			continue
		}
		out = append(out, sessionMode{ID: a.Name, Name: "Agent: " + a.Name, Description: a.Description})
	}
	return out
}

func (ls *liveSession) isAgentMode(id string) bool {
	return slices.ContainsFunc(ls.agentModes(), func(m sessionMode) bool { return m.ID == id })
}

// modeIDs are every mode's id, for messages.
func (ls *liveSession) modeIDs() []string {
	var ids []string
	for _, m := range modes {
		ids = append(ids, m.id)
	}
	for _, m := range ls.agentModes() {
		ids = append(ids, m.ID)
	}
	return ids
}

// currentModeID is the mode the client shows: the session's agent, or its
// permission mode under build.
func (ls *liveSession) currentModeID() string {
	ls.mu.Lock()
	name := ls.agentName
	ls.mu.Unlock()
	if name != "" && name != agents.Build && ls.isAgentMode(name) {
		return name
	}
	return ls.currentMode()
}

// turnAgent is the agent the next turn runs; "" leaves the session's.
func (ls *liveSession) turnAgent() string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.ag().Agents() == nil {
		return ""
	}
	return ls.agentName
}

// setAgent makes name the session's agent, in the store too, so that
// session/load finds it.
func (ls *liveSession) setAgent(ctx context.Context, name string) error {
	if ls.ag().Agents() == nil {
		return nil
	}
	sess, err := ls.ag().Store().Session(ctx, ls.id)
	if err != nil {
		return err
	}
	stored := name
	if name == agents.Build {
		stored = ""
	}
	if sess.Agent != stored && !(sess.Agent == agents.Build && stored == "") {
		sess.Agent = stored
		if err := ls.ag().Store().PutSession(ctx, sess); err != nil {
			return err
		}
	}
	ls.mu.Lock()
	ls.agentName = name
	ls.mu.Unlock()
	return nil
}
