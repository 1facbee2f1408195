package lsp

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
)

// progress is a turn's work-done progress, for clients that take no
// session updates: create, begin, reports, end, sent strictly in that
// order (Neovim 0.7.2 raises an error on a report for a token it has not
// seen begin) by one goroutine, so nothing the turn does waits on the
// client. Reports that come faster than the client takes them are
// coalesced: only the latest is sent.
type progress struct {
	s     *Server
	token string
	title string
	wake  chan struct{}
	done  chan struct{}

	mu         sync.Mutex
	pending    string // the report not sent yet
	hasPending bool
	ending     bool
	endMsg     string
}

type progressParams struct {
	Token string `json:"token"`
	Value any    `json:"value"`
}

type progressBegin struct {
	Kind        string `json:"kind"`
	Title       string `json:"title"`
	Message     string `json:"message,omitempty"`
	Cancellable bool   `json:"cancellable"`
}

type progressReport struct {
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
}

// startProgress starts the progress of turn t.
func (s *Server) startProgress(t *turn) *progress {
	p := &progress{s: s, token: t.id, title: t.title, wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.goOwned(p.run)
	return p
}

func (p *progress) run() {
	defer close(p.done)
	ctx := context.WithoutCancel(p.s.ctx) // the end must go out even while the server stops
	err := p.s.call(p.s.ctx, 0, "window/workDoneProgress/create", map[string]string{"token": p.token}, nil)
	if err != nil {
		p.s.log.Debug("lsp: no progress for the turn", "turn", p.token, "err", err)
		return
	}
	p.send(ctx, progressBegin{Kind: "begin", Title: "darman", Message: p.title, Cancellable: true})
	for {
		select {
		case <-p.wake:
		case <-p.s.ctx.Done():
			p.send(ctx, progressReport{Kind: "end", Message: "cancelled"})
			return
		}
		p.mu.Lock()
		report, has, ending, endMsg := p.pending, p.hasPending, p.ending, p.endMsg
		p.hasPending = false
		p.mu.Unlock()
		if has && !ending {
			p.send(ctx, progressReport{Kind: "report", Message: report})
		}
		if ending {
			p.send(ctx, progressReport{Kind: "end", Message: endMsg})
			return
		}
	}
}

func (p *progress) send(ctx context.Context, value any) {
	if err := p.s.conn.Notify(ctx, "$/progress", progressParams{Token: p.token, Value: value}); err != nil {
		p.s.log.Debug("lsp: progress not sent", "turn", p.token, "err", err)
	}
}

func (p *progress) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// report sets the progress message ("running go test ./...").
func (p *progress) report(msg string) {
	p.mu.Lock()
	if !p.ending {
		p.pending, p.hasPending = msg, true
	}
	p.mu.Unlock()
	p.poke()
}

// end ends the progress with msg ("done", "failed: …", "cancelled"); only
// the first call counts.
func (p *progress) end(msg string) {
	p.mu.Lock()
	if !p.ending {
		p.ending, p.endMsg = true, msg
	}
	p.mu.Unlock()
	p.poke()
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
	s.mu.Lock()
	var found *turn
	for _, l := range s.live {
		if l.turn != nil && l.turn.id == token {
			found = l.turn
		}
	}
	s.mu.Unlock()
	if found != nil {
		s.log.Info("lsp: the user cancelled the turn from its progress", "turn", token)
		found.cancel()
	}
	return nil
}
