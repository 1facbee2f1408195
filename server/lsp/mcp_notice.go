package lsp

import (
	"github.com/darman-dev/darman/server/lsp/internal/update"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// notices takes the state changes of the MCP servers, and of the language
// servers, to the editor (Setup.Notices): warnings and errors (a server
// failed or crashed) are shown with window/showMessage, the rest
// (starting, ready, retiring, not installed) go to the client's log with
// window/logMessage. A client that takes session updates also gets each
// as a `notice` update in every session running a turn, where the user is
// looking while the turn may need that server; a server's state belongs to
// the workspace, not to one session, so idle sessions get none, and
// darman.status lists the current state of each.
func (s *Server) notices(level, text string) {
	if s.client.opt.SessionUpdates {
		for _, t := range s.runningTurns() {
			s.notifyUpdate(t.session, t.id, update.Notice(level, text))
		}
	}
	switch level {
	case "error":
		s.showMessage(protocol.MessageTypeError, text)
	case "warning":
		s.showMessage(protocol.MessageTypeWarning, text)
	default:
		s.logMessage(protocol.MessageTypeInfo, text)
	}
}
