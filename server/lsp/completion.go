package lsp

import (
	"context"

	"github.com/darman-dev/darman/agent/complete"
)

// CompletionConfig is the inline completion setup Options.Completion
// finds in a workspace's configuration.
type CompletionConfig struct {
	// Options are the engine's; the server fills in Root, Buffers and
	// Logger.
	Options complete.Options
	// Items also offers the suggestion as a textDocument/completion item,
	// for editors without inline completions.
	Items bool
}

// setupCompletion starts the inline completions (internal/completion)
// with the workspace's configuration, while initialize is answered:
// Options.Completion must not wait for the network.
func (s *Server) setupCompletion(ctx context.Context, setup Setup) {
	if s.opts.Completion == nil {
		return
	}
	cfg, err := s.opts.Completion(ctx, setup)
	if err != nil {
		s.complete.Refuse(err)
		s.log.Warn("lsp: inline completions are off", "err", err)
		return
	}
	if cfg == nil {
		return
	}
	s.complete.Start(cfg.Options, cfg.Items, s.root)
}

// completionCapabilities adds inlineCompletionProvider (LSP 3.18) and, when
// the items are on, completionProvider to darman's capabilities. Without
// a completion engine (on false) the answer is initialize's as before.
func completionCapabilities(res initResult, on, items bool) initResult {
	if !on {
		return res
	}
	if items {
		res.Capabilities.CompletionProvider = &completionOptions{ResolveProvider: false}
	}
	res.Capabilities.InlineCompletionProvider = true
	return res
}
