package lsp

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/agent/transcript"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/rpc"
)

// transcriptPath is where a session's Markdown transcript is kept.
func (s *Server) transcriptPath(id agent.ID) string {
	dir := s.opts.DataDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "darman")
	}
	return filepath.Join(dir, "transcripts", string(id)+".md")
}

// writeTranscript renders the session from the store into its transcript
// file, atomically, so an editor showing it reloads a whole file.
func (s *Server) writeTranscript(ctx context.Context, a *Agent, id agent.ID) (string, error) {
	// One write at a time, each reading the store afresh: a write that
	// started earlier never lands over a later one.
	s.transcriptMu.Lock()
	defer s.transcriptMu.Unlock()
	path := s.transcriptPath(id)
	sess, err := a.Store.Session(ctx, id)
	if err != nil {
		return "", err
	}
	msgs, err := a.Store.Messages(ctx, id)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := transcript.Markdown(&buf, transcript.Session{Session: sess, Messages: msgs}); err != nil {
		return "", err
	}
	// The disk's writes no longer make missing directories (they refuse
	// to follow links out of the root), so the transcripts' own is made
	// here, private like the store beside it.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		s.log.Warn("lsp: cannot make the transcripts' directory", "path", path, "err", err)
		return "", err
	}
	if err := tool.NewDisk(filepath.Dir(path)).WriteFile(ctx, path, buf.Bytes()); err != nil {
		s.log.Warn("lsp: cannot write the transcript", "path", path, "err", err)
		return "", err
	}
	return path, nil
}

// openTranscript writes the session's transcript and asks the editor to
// show it beside the code (takeFocus false). A client that cannot show
// documents gets the file's path in its log instead, once.
func (s *Server) openTranscript(ctx context.Context, a *Agent, id agent.ID) (string, error) {
	path, err := s.writeTranscript(ctx, a, id)
	if err != nil {
		return "", err
	}
	uri := buffer.PathToURI(path)
	if !s.noShowDocument.Load() && s.client.showDocument() {
		var res protocol.ShowDocumentResult
		err = s.call(ctx, 0, protocol.ServerWindowShowDocument, protocol.ShowDocumentParams{URI: uri, TakeFocus: &protocol.False}, &res)
		switch {
		case err == nil && res.Success:
			return uri, nil
		case err != nil && !rpc.IsMethodNotFound(err):
			s.log.Debug("lsp: showDocument failed", "err", err)
			return uri, nil
		}
	}
	// Neovim 0.7.2 says it cannot show documents; Emacs 1.9 answers null.
	if s.noShowDocument.CompareAndSwap(false, true) {
		s.logMessage(protocol.MessageTypeInfo, "darman keeps the session's transcript in "+path)
	}
	return uri, nil
}

// transcriptOn says whether the server keeps transcripts for a client
// that takes no session updates (the transcript setting, else the agent's).
func (s *Server) transcriptOn() bool {
	s.mu.Lock()
	set, off := s.settings.transcriptSet, s.settings.noTranscript
	s.mu.Unlock()
	if set {
		return !off
	}
	if a, err := s.agent.peek(); err == nil {
		return !a.NoTranscript
	}
	return true
}
