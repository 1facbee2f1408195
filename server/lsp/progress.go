package lsp

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/darman-dev/darman/server/lsp/internal/progress"
)

// startProgress starts the work-done progress of turn t
// (server/lsp/internal/progress), on the server's connection.
func (s *Server) startProgress(t *liveTurn) *progress.Progress {
	p := progress.New(s.ctx, progressConn{s}, s.log, t.id, t.title)
	s.goOwned(p.Run)
	return p
}

// progressConn is the server's connection as progress uses it: calls
// with the server's timeout for requests to the editor.
type progressConn struct{ s *Server }

func (c progressConn) Call(ctx context.Context, method string, params, result any) error {
	return c.s.call(ctx, 0, method, params, result)
}

func (c progressConn) Notify(ctx context.Context, method string, params any) error {
	return c.s.conn.Notify(ctx, method, params)
}

// workDoneProgressCancel cancels the turn whose progress the user
// cancelled in the editor.
func (s *Server) workDoneProgressCancel(_ context.Context, raw json.RawMessage) error {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	token := string(p.Token)
	if unq, err := strconv.Unquote(token); err == nil {
		token = unq
	}
	if found := s.turnByID(token); found != nil {
		s.log.Info("lsp: the user cancelled the turn from its progress", "turn", token)
		found.cancel()
	}
	return nil
}
