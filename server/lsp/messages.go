package lsp

import (
	"context"
	"sync"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/server/rpc"
)

// showMessage shows the user a message; a failure to send is logged.
func (s *Server) showMessage(kind protocol.MessageType, msg string) {
	if err := s.conn.Notify(s.ctx, protocol.ServerWindowShowMessage, protocol.ShowMessageParams{Type: kind, Message: msg}); err != nil {
		s.log.Debug("lsp: showMessage not sent", "err", err)
	}
}

// logMessage writes a line to the editor's log of this server (Neovim's
// :LspLog, VS Code's output channel) for the user who wants to look.
func (s *Server) logMessage(kind protocol.MessageType, msg string) {
	if err := s.conn.Notify(s.ctx, protocol.ServerWindowLogMessage, protocol.LogMessageParams{Type: kind, Message: msg}); err != nil {
		s.log.Debug("lsp: logMessage not sent", "err", err)
	}
}

// call sends a request to the client and waits at most d for its answer
// (zero means Options.CallTimeout). While it waits it writes a line to the
// client's log every second (not to VS Code, client.nudged): Emacs 28's jsonrpc can hold back a message
// that arrived together with others until more input comes, and that line
// is the input that lets the answer through (docs/protocol.md, "Known
// client quirks").
func (s *Server) call(ctx context.Context, d time.Duration, method string, params, result any) error {
	p, err := s.send(ctx, d, method, params)
	if err != nil {
		return err
	}
	return s.wait(p, method, result)
}

// send writes a request to the client now, after everything sent before
// it, with call's time limit; wait reads its answer.
func (s *Server) send(ctx context.Context, d time.Duration, method string, params any) (*rpc.Pending, error) {
	if d <= 0 {
		d = s.opts.CallTimeout
	}
	return s.conn.Send(ctx, d, method, params)
}

// wait reads the answer of the request p, writing call's line to the
// client's log while it waits.
func (s *Server) wait(p *rpc.Pending, method string, result any) error {
	if !s.client.nudged() {
		return p.Wait(result)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				s.logMessage(protocol.MessageTypeLog, "darman is waiting for the editor to answer "+method)
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()
	return p.Wait(result)
}
