// Package progress is a turn's work-done progress ($/progress), which the
// LSP front shows to a client that takes no session updates: create,
// begin, reports, end, sent strictly in that order (Neovim 0.7.2 raises an
// error on a report for a token it has not seen begin) by one goroutine,
// Run, so nothing the turn does waits on the client. Reports that come
// faster than the client takes them are coalesced: only the latest is
// sent. The server gives it a Conn to the client; which turn a token
// names, and cancelling it, stay the server's.
package progress

import (
	"context"
	"log/slog"
	"sync"
)

// Conn is the client connection progress talks on.
type Conn interface {
	// Call sends a request and waits for its answer (or the server's
	// timeout for requests to the editor).
	Call(ctx context.Context, method string, params, result any) error
	// Notify sends a notification.
	Notify(ctx context.Context, method string, params any) error
}

// Progress is one turn's progress. Make it with New, run Run on a
// goroutine of its own, and end it with End.
type Progress struct {
	ctx   context.Context
	conn  Conn
	log   *slog.Logger
	token string
	title string
	wake  chan struct{}

	mu         sync.Mutex
	pending    string // the report not sent yet
	hasPending bool
	ending     bool
	endMsg     string
}

type params struct {
	Token string `json:"token"`
	Value any    `json:"value"`
}

type begin struct {
	Kind        string `json:"kind"`
	Title       string `json:"title"`
	Message     string `json:"message,omitempty"`
	Cancellable bool   `json:"cancellable"`
}

type report struct {
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
}

// New is the progress of token (the turn's id), titled with the turn's
// prompt; ctx is the server's lifetime: when it ends, Run ends the
// progress as cancelled.
func New(ctx context.Context, conn Conn, log *slog.Logger, token, title string) *Progress {
	return &Progress{ctx: ctx, conn: conn, log: log, token: token, title: title, wake: make(chan struct{}, 1)}
}

// Run creates the progress in the client and sends what Report and End
// set, until the end is sent or the client refused the progress.
func (p *Progress) Run() {
	ctx := context.WithoutCancel(p.ctx) // the end must go out even while the server stops
	err := p.conn.Call(p.ctx, "window/workDoneProgress/create", map[string]string{"token": p.token}, nil)
	if err != nil {
		p.log.Debug("lsp: no progress for the turn", "turn", p.token, "err", err)
		return
	}
	p.send(ctx, begin{Kind: "begin", Title: "darman", Message: p.title, Cancellable: true})
	for {
		select {
		case <-p.wake:
		case <-p.ctx.Done():
			p.send(ctx, report{Kind: "end", Message: "cancelled"})
			return
		}
		p.mu.Lock()
		pending, has, ending, endMsg := p.pending, p.hasPending, p.ending, p.endMsg
		p.hasPending = false
		p.mu.Unlock()
		if has && !ending {
			p.send(ctx, report{Kind: "report", Message: pending})
		}
		if ending {
			p.send(ctx, report{Kind: "end", Message: endMsg})
			return
		}
	}
}

func (p *Progress) send(ctx context.Context, value any) {
	if err := p.conn.Notify(ctx, "$/progress", params{Token: p.token, Value: value}); err != nil {
		p.log.Debug("lsp: progress not sent", "turn", p.token, "err", err)
	}
}

func (p *Progress) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Report sets the progress message ("running go test ./...").
func (p *Progress) Report(msg string) {
	p.mu.Lock()
	if !p.ending {
		p.pending, p.hasPending = msg, true
	}
	p.mu.Unlock()
	p.poke()
}

// End ends the progress with msg ("done", "failed: …", "cancelled"); only
// the first call counts.
func (p *Progress) End(msg string) {
	p.mu.Lock()
	if !p.ending {
		p.ending, p.endMsg = true, msg
	}
	p.mu.Unlock()
	p.poke()
}
