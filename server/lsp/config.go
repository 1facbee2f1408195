package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/server/rpc"
)

// serverSettings are the settings the server reads itself; the rest of the
// client's darman settings are the configuration's keys and go to
// Options.Start.
type serverSettings struct {
	// codeActions replace DefaultPromptActions when set.
	codeActions []PromptAction
	// noTranscript turns the transcript fallback off ("transcript": false);
	// transcriptSet says the editor's settings hold the key at all.
	noTranscript, transcriptSet bool
}

// The keys of the darman settings the server takes out for itself.
const (
	keyCodeActions = "codeActions"
	keyTranscript  = "transcript"
)

// splitSettings checks the client's darman settings and separates the
// server's keys from the configuration's. A problem names its key.
func splitSettings(raw json.RawMessage) (serverSettings, json.RawMessage, error) {
	var ss serverSettings
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ss, nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return ss, nil, fmt.Errorf("the darman settings must be a JSON object: %v", err)
	}
	if v, ok := m[keyCodeActions]; ok {
		delete(m, keyCodeActions)
		var actions []PromptAction
		if err := rpc.DecodeStrict(v, &actions); err != nil {
			return ss, nil, fmt.Errorf("%s: expected a list of {\"title\", \"prompt\"} objects: %v", keyCodeActions, errText(err))
		}
		for i, a := range actions {
			switch {
			case strings.TrimSpace(a.Title) == "":
				return ss, nil, fmt.Errorf("%s[%d].title is empty", keyCodeActions, i)
			case strings.TrimSpace(a.Prompt) == "":
				return ss, nil, fmt.Errorf("%s[%d].prompt is empty", keyCodeActions, i)
			}
		}
		ss.codeActions = actions
		if ss.codeActions == nil {
			ss.codeActions = []PromptAction{}
		}
	}
	if v, ok := m[keyTranscript]; ok {
		delete(m, keyTranscript)
		var on bool
		if err := json.Unmarshal(v, &on); err != nil {
			return ss, nil, fmt.Errorf("%s: expected true or false, got %s", keyTranscript, v)
		}
		ss.noTranscript, ss.transcriptSet = !on, true
	}
	if len(m) == 0 {
		return ss, nil, nil
	}
	rest, err := json.Marshal(m)
	return ss, rest, err
}

func errText(err error) string {
	s := err.Error()
	if _, after, ok := strings.Cut(s, "invalid params: "); ok {
		return after
	}
	return s
}

// promptActions are the selection's code actions in force.
// The editor's settings win over the configuration file's, which win over
// the defaults.
func (s *Server) promptActions() []PromptAction {
	s.mu.Lock()
	actions := s.settings.codeActions
	s.mu.Unlock()
	if actions != nil {
		return actions
	}
	if a, err := s.agent.peek(); err == nil && a.PromptActions != nil {
		return a.PromptActions
	}
	return DefaultPromptActions
}

// didChangeConfiguration takes the darman section of the new settings: sent
// with the notification, or, when the client sends none and can answer
// workspace/configuration, asked for.
func (s *Server) didChangeConfiguration(_ context.Context, raw json.RawMessage) error {
	var p struct {
		Settings json.RawMessage `json:"settings"`
	}
	if err := rpc.Decode(raw, &p); err != nil {
		return err
	}
	var section json.RawMessage
	var settings map[string]json.RawMessage
	if json.Unmarshal(p.Settings, &settings) == nil {
		section = settings["darman"]
	}
	switch {
	case section != nil:
		s.goOwned(func() { s.applySettings(section) })
	case s.client.caps.Workspace.Configuration:
		s.goOwned(func() {
			var sections []json.RawMessage
			err := s.call(s.ctx, 0, "workspace/configuration", map[string]any{"items": []map[string]string{{"section": "darman"}}}, &sections)
			if err != nil || len(sections) != 1 {
				s.log.Warn("lsp: workspace/configuration failed", "err", err)
				return
			}
			s.applySettings(sections[0])
		})
	default:
		s.log.Debug("lsp: didChangeConfiguration without a darman section")
	}
	return nil
}

// applySettings applies new settings as a whole, or not at all: a bad
// setting is shown to the user, naming its key, and the previous settings
// stay in force. Changed configuration keys start a new agent; the old one
// finishes its running turns first.
func (s *Server) applySettings(raw json.RawMessage) {
	s.reconfigure.Lock()
	defer s.reconfigure.Unlock()
	select {
	case <-s.agent.ready:
	case <-s.ctx.Done():
		return
	}
	ss, agentSettings, err := splitSettings(raw)
	if err == nil && !bytes.Equal(agentSettings, s.agentSettings) {
		var a *Agent
		a, err = s.startAgentNow(agentSettings)
		if err == nil {
			s.agentSettings = agentSettings
			s.swapAgent(a)
		}
	}
	if err != nil {
		s.log.Warn("lsp: settings not applied", "err", err)
		s.showMessage(protocol.MessageTypeError, "darman: the new settings were not applied, the previous ones stay in force: "+err.Error())
		return
	}
	s.mu.Lock()
	s.settings = ss
	s.mu.Unlock()
	s.logMessage(protocol.MessageTypeInfo, "darman: settings applied")
}

// swapAgent puts a in service; the agent it replaces is closed once its
// running turns have ended.
func (s *Server) swapAgent(a *Agent) {
	s.agent.mu.Lock()
	old := s.agent.agent
	s.agent.agent, s.agent.err = a, nil
	s.agent.mu.Unlock()
	if old == nil {
		return
	}
	s.goOwned(func() {
		for {
			t := s.findTurn(func(t *liveTurn) bool { return t.agent == old })
			if t == nil {
				break
			}
			<-t.ended
		}
		if err := old.Runtime.Close(); err != nil {
			s.log.Warn("lsp: closing the previous agent", "err", err)
		}
	})
}
