package diagnostics

import (
	"context"
	"time"
)

// warmQuery is the workspace/symbol query that has a server build its
// index without matching anything.
const warmQuery = "qqqqqqqqqqqq"

// Warm starts, in the background, the servers a workspace-wide query
// would ask (those whose project marker is in the root, and those
// running), and has each load the project and index its symbols, so that
// the first query finds them ready instead of paying their load. It
// returns at once. The work ends when it is done, after timeout, when ctx
// ends or when the pool closes; a query meanwhile waits for the same
// start rather than starting a second server.
//
// The first query to reach a server ends that server's warm-up, the
// symbol indexing (the server, its start and the file it anchors stay:
// the query may be waiting for that file): a language server may serve
// requests one at a time (gopls does, workspace/symbol included), so a
// diagnostics or references question asked while the warm-up builds the
// symbol index would otherwise wait for an index it does not need, and a
// symbol query builds it itself.
func (p *Pool) Warm(ctx context.Context, timeout time.Duration) {
	entries, err := p.workspaceEntries("")
	if err != nil {
		p.log.Debug("warm: no server to start", "err", err)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	for _, e := range entries {
		// Registered before the work starts, so that a query coming
		// first ends it (see stopWarmLocked).
		wctx, cancel := context.WithTimeout(context.WithValue(p.ctx, warmingKey{}, true), timeout)
		sctx, stopIndex := context.WithCancel(wctx)
		w := &warmup{stop: stopIndex}
		e.warm = w
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer cancel()
			defer func() {
				p.mu.Lock()
				if e.warm == w {
					e.warm = nil
				}
				p.mu.Unlock()
			}()
			stop := context.AfterFunc(ctx, cancel)
			defer stop()
			start := time.Now()
			c, err := e.acquire(wctx)
			if err != nil && wctx.Err() == nil {
				p.log.Debug("warm: the server did not start", "server", e.srv.name, "err", err)
			}
			if err != nil {
				return
			}
			if !e.srv.indexesWorkspace {
				p.anchor(wctx, e, c)
			}
			// A query has the server load the project and index its
			// symbols; this one matches nothing, for a short answer (the
			// empty query would be answered without indexing).
			if sctx.Err() != nil {
				return // a query came first
			}
			_, err = c.WorkspaceSymbols(sctx, warmQuery)
			p.log.Debug("warm: the server is ready", "server", e.srv.name, "took", time.Since(start), "err", err)
		}()
	}
}

// warmup is a warm-up in progress; stop ends its symbol indexing.
type warmup struct{ stop context.CancelFunc }

// warmingKey marks the context of a warm-up's own requests, which do not
// end it.
type warmingKey struct{}

// stopWarmLocked ends the entry's warm-up, if one runs, for a query that
// came; the caller holds the pool's mu.
func (e *entry) stopWarmLocked(ctx context.Context) {
	if e.warm == nil || ctx.Value(warmingKey{}) != nil {
		return
	}
	e.pool.log.Debug("warm: a query came first; the warm-up ends", "server", e.srv.name)
	e.warm.stop()
	e.warm = nil
}
