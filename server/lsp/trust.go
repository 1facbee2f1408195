package lsp

import (
	"context"
	"encoding/json"
	"errors"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

// Workspace trust in the editor. The editor's own signal wins when it
// sends one: initializationOptions.workspaceTrusted (the VS Code
// extension sends vscode.workspace.isTrusted), and darman.trust with
// {"editor": true} when the user grants trust later. A client that sends
// none gets, once the agent is up, the folder's summary as one
// window/showMessageRequest (trust it, not now, never); darman.trust with
// no argument trusts the folder at any time, recording it as darman
// trust does. Either way the agent starts again with the folder's
// settings.

// TrustState is what the agent made of the folder's own configuration.
type TrustState struct {
	// Trusted reports whether the folder's widening settings apply.
	Trusted bool
	// Notice is the one line said when they were left out; "" when none.
	Notice string
	// Question is the summary asked about, "" when nothing is to be
	// asked (trusted, never, or the editor decided).
	Question string
	// Ignored names what was left out, for darman.status.
	Ignored []string
}

var errNoTrust = errors.New("this darman cannot record trust")

// The answers of the trust question, its buttons' titles.
const (
	trustYes    = "Trust this folder"
	trustNotNow = "Not now"
	trustNever  = "Never"
)

// tellTrust says what the folder's settings came to and, when darman may
// ask, asks.
func (s *Server) tellTrust(a *Agent) {
	if a.Trust.Question == "" || s.opts.Trust == nil {
		if a.Trust.Notice != "" {
			s.showMessage(protocol.MessageTypeWarning, "darman: "+a.Trust.Notice)
		}
		return
	}
	choice, err := editorGate{s: s}.choose(s.ctx, protocol.MessageTypeWarning, "darman: "+a.Trust.Question, trustYes, trustNotNow, trustNever)
	if err != nil {
		// No one answered (no showMessageRequest, dismissed): say it in
		// the one line, with how to trust later.
		s.log.Debug("lsp: trust question not answered", "err", err)
		s.showMessage(protocol.MessageTypeWarning, "darman: "+a.Trust.Notice+", or the darman.trust command")
		return
	}
	switch choice {
	case trustYes:
		s.trustNow(false, false)
	case trustNotNow:
		s.showMessage(protocol.MessageTypeWarning, "darman: "+a.Trust.Notice+", or the darman.trust command")
	case trustNever:
		if err := s.opts.Trust(s.ctx, s.root, true); err != nil {
			s.showMessage(protocol.MessageTypeError, "darman: "+err.Error())
		}
	}
}

// trustNow trusts the folder (editor: by the editor's grant, recorded
// nowhere; else recorded) and starts the agent again with its settings.
func (s *Server) trustNow(editor, never bool) error {
	if editor {
		s.mu.Lock()
		t := true
		s.editorTrust = &t
		s.mu.Unlock()
	} else if err := s.opts.Trust(s.ctx, s.root, never); err != nil {
		s.showMessage(protocol.MessageTypeError, "darman: "+err.Error())
		return err
	}
	s.reconfigure.Lock()
	defer s.reconfigure.Unlock()
	select {
	case <-s.agent.ready:
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
	s.loadAgents(s.ctx, s.setup(s.agentSettings))
	a, err := s.startAgentNow(s.agentSettings)
	if err != nil {
		s.showMessage(protocol.MessageTypeError, "darman: the folder is trusted, but the agent did not start again: "+err.Error())
		return err
	}
	s.swapAgent(a)
	if err := s.conn.Notify(s.ctx, "darman/agentsChanged", agentsChangedParams{Agents: agentInfos(s.catalog())}); err != nil {
		s.log.Debug("lsp: darman/agentsChanged not sent", "err", err)
	}
	s.showMessage(protocol.MessageTypeInfo, "darman: this folder is trusted; its own configuration applies")
	return nil
}

// cmdTrust is darman.trust: {"editor": true} from an editor whose user
// granted trust, no argument to trust the folder as darman trust does.
func (s *Server) cmdTrust(_ context.Context, arg json.RawMessage) (any, error) {
	var p struct {
		Editor bool `json:"editor"`
	}
	if err := args("darman.trust", arg, &p); err != nil {
		return nil, err
	}
	if s.opts.Trust == nil {
		return nil, errNoTrust
	}
	s.goOwned(func() { s.trustNow(p.Editor, false) })
	return map[string]any{"trusted": true}, nil
}
