package lsp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/server/rpc"
)

// editorGate takes MCP servers' elicitations to the editor's user: it is
// the permission.Elicitor of the Setup.
//
// A client that opted in with capabilities.experimental.darman.elicitation
// gets one darman/elicit request per elicitation and answers it with its
// own prompts (see askElicit); a client that answers it with
// MethodNotFound falls back to the way below.
//
// Otherwise it asks with window/showMessageRequest, whose answers are
// buttons: an open-URL request is "Decline" or "Open" (then
// window/showDocument with external set, so the browser opens it); a form
// is asked field by field
// when every field is a choice (an enum, or yes/no for a boolean), and is
// declined, with a message saying why, when a field wants typed text. A
// client without showMessageRequest makes every elicitation
// permission.ErrNoHuman. Nothing of an elicitation is kept: after a
// restart it is gone.
//
// An elicitation during a turn whose questions come on its stream is
// asked in the stream's order (askElicitOnStream); others, through the
// Setup's Elicitor.
type editorGate struct {
	s *Server
	// sent, when set, is called once the elicitation's first message was
	// written to the client (so after every update sent before it).
	sent func()
}

// wrote says the first message was written.
func (g editorGate) wrote() {
	if g.sent != nil {
		g.sent()
	}
}

// askElicitOnStream asks the elicitation of turn t's stream
// (session.Question.Elicitation): its first message is written before
// askElicitOnStream returns; the answer goes back to the turn once the
// user gives it, or the question's context ends.
func (s *Server) askElicitOnStream(sq *session.Question) {
	written := make(chan struct{})
	sent := sync.OnceFunc(func() { close(written) })
	s.goOwned(func() {
		defer sent()
		sq.AnswerElicitation(editorGate{s: s, sent: sent}.Elicit(sq.Context(), *sq.Elicitation))
	})
	<-written
}

// errDismissed is a question closed without a choice: the server is told
// "cancel".
var errDismissed = errors.New("the user dismissed the question")

// choose asks one question with buttons and returns the chosen title.
func (g editorGate) choose(ctx context.Context, kind protocol.MessageType, msg string, titles ...string) (string, error) {
	if g.s.questions.noShowMessageRequest.Load() {
		return "", permission.ErrNoHuman
	}
	actions := make([]protocol.MessageActionItem, len(titles))
	for i, t := range titles {
		actions[i] = protocol.MessageActionItem{Title: t}
	}
	var choice *protocol.MessageActionItem
	p, err := g.s.send(ctx, g.s.opts.PermissionTimeout, protocol.ServerWindowShowMessageRequest,
		protocol.ShowMessageRequestParams{Type: kind, Message: msg, Actions: actions})
	g.wrote()
	if err == nil {
		err = g.s.wait(p, protocol.ServerWindowShowMessageRequest, &choice)
	}
	switch {
	case err != nil && rpc.IsMethodNotFound(err):
		g.s.questions.noShowMessageRequest.Store(true)
		return "", permission.ErrNoHuman
	case err != nil:
		return "", err
	case choice == nil:
		return "", errDismissed
	}
	return choice.Title, nil
}

func (g editorGate) Elicit(ctx context.Context, e permission.Elicitation) (permission.ElicitAnswer, error) {
	if g.s.client.opt.Elicitation {
		ans, err := g.askElicit(ctx, e)
		if err == nil || !rpc.IsMethodNotFound(err) {
			return ans, err
		}
		g.s.log.Warn("lsp: the client opted in to darman/elicit but does not know it; asking with showMessageRequest", "server", e.Server)
	}
	if e.Mode == "url" {
		return g.openURL(ctx, e)
	}
	for _, f := range e.Fields {
		if f.Type != "boolean" && len(f.Enum) == 0 {
			g.s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf(
				"The MCP server %s asked for %q, which needs typed text that this editor's prompts cannot take; darman declined.", e.Server, fieldName(f)))
			g.wrote()
			return permission.ElicitAnswer{}, permission.ErrNoHuman
		}
	}
	choice, err := g.choose(ctx, protocol.MessageTypeInfo, fmt.Sprintf("The MCP server %s asks: %s", e.Server, e.Message), "Decline", "Answer")
	if err != nil {
		return permission.ElicitAnswer{}, err
	}
	if choice != "Answer" {
		return permission.ElicitAnswer{Action: "decline"}, nil
	}
	content := map[string]any{}
	for _, f := range e.Fields {
		choices := f.Enum
		if f.Type == "boolean" {
			choices = []string{"Yes", "No"}
		}
		if !f.Required {
			choices = append(append([]string(nil), choices...), "Skip")
		}
		msg := fieldName(f)
		if f.Description != "" {
			msg += ": " + f.Description
		}
		choice, err := g.choose(ctx, protocol.MessageTypeInfo, fmt.Sprintf("%s (for the MCP server %s)", msg, e.Server), choices...)
		if err != nil {
			return permission.ElicitAnswer{}, err
		}
		switch {
		case choice == "Skip" && !f.Required:
		case f.Type == "boolean":
			content[f.Name] = choice == "Yes"
		case f.Type == "array":
			content[f.Name] = []any{choice}
		default:
			content[f.Name] = choice
		}
	}
	return permission.ElicitAnswer{Action: "accept", Content: content}, nil
}

func fieldName(f permission.ElicitField) string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// openURL asks before opening: the URL is the server's, and may sign the
// user in somewhere.
func (g editorGate) openURL(ctx context.Context, e permission.Elicitation) (permission.ElicitAnswer, error) {
	msg := fmt.Sprintf("The MCP server %s asks you to open %s", e.Server, e.URL)
	if m := strings.TrimSpace(e.Message); m != "" {
		msg += ": " + m
	}
	choice, err := g.choose(ctx, protocol.MessageTypeInfo, msg, "Decline", "Open")
	if err != nil {
		return permission.ElicitAnswer{}, err
	}
	if choice != "Open" {
		return permission.ElicitAnswer{Action: "decline"}, nil
	}
	var res protocol.ShowDocumentResult
	external := true
	if err := g.s.call(ctx, 0, protocol.ServerWindowShowDocument, protocol.ShowDocumentParams{URI: protocol.URI(e.URL), External: &external}, &res); err != nil || !res.Success {
		g.s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("darman could not open %s; open it yourself to continue with %s.", e.URL, e.Server))
	}
	return permission.ElicitAnswer{Action: "accept"}, nil
}
