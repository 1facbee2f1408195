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
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			wctx, cancel := context.WithTimeout(p.ctx, timeout)
			defer cancel()
			stop := context.AfterFunc(ctx, cancel)
			defer stop()
			start := time.Now()
			c, err := e.acquire(wctx)
			if err != nil {
				p.log.Debug("warm: the server did not start", "server", e.srv.name, "err", err)
				return
			}
			if !e.srv.indexesWorkspace {
				p.anchor(wctx, e, c)
			}
			// A query has the server load the project and index its
			// symbols; this one matches nothing, for a short answer (the
			// empty query would be answered without indexing).
			_, err = c.WorkspaceSymbols(wctx, warmQuery)
			p.log.Debug("warm: the server is ready", "server", e.srv.name, "took", time.Since(start), "err", err)
		}()
	}
}
