package session

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent"
)

// How streamed text reaches the store and the people watching. Writing the
// whole part again for every delta costs bytes that grow with the square of
// the answer, so a growing part is stored as its first text, then as
// appends (Store.AppendPart) of what arrived since the last write, and put
// whole once it ends, which replaces the appends. A delta is shown only
// once it is stored, so after a crash the store holds everything anyone
// saw. Deltas that arrive less than flushEvery after the last write wait
// for the next one (at most flushEvery later, or when flushBytes have
// piled up) and are shown together: a fast stream costs one write per
// flushEvery, not one per delta, and a slow one is shown delta by delta.
const (
	flushEvery = 50 * time.Millisecond
	flushBytes = 16 << 10
)

// growth is the streamed text of one model call: at most one part has text
// not yet stored at any time (a delta of another part flushes it first, so
// the order of what is shown is the order it came in).
type growth struct {
	t   *turn
	ctx context.Context

	mu      sync.Mutex
	parts   map[*agent.Part]*growing
	pending *growing // the part with text not stored yet, or nil
	last    time.Time
	timer   *time.Timer
	closed  bool
}

// growing is one part's streamed text.
type growing struct {
	p       *agent.Part
	event   agent.EventKind
	text    strings.Builder // all of it; p.Text is set from it when the part ends
	flushed int             // how much of text is stored and shown
	stored  bool            // the part's record is in the store
	seq     int             // appends made so far
}

func newGrowth(ctx context.Context, t *turn) *growth {
	return &growth{t: t, ctx: context.WithoutCancel(ctx), parts: map[*agent.Part]*growing{}}
}

// add appends a delta to part p, publishing it as an event of kind ev once
// it is stored.
func (g *growth) add(p *agent.Part, ev agent.EventKind, text string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gp := g.parts[p]
	if gp == nil {
		gp = &growing{p: p, event: ev}
		gp.text.WriteString(p.Text)
		gp.flushed = len(p.Text)
		gp.stored = p.Text != ""
		g.parts[p] = gp
	}
	if g.pending != nil && g.pending != gp {
		g.flushLocked()
	}
	gp.text.WriteString(text)
	g.pending = gp
	if time.Since(g.last) >= flushEvery || gp.text.Len()-gp.flushed >= flushBytes {
		g.flushLocked()
		return
	}
	if g.timer == nil {
		g.timer = time.AfterFunc(flushEvery-time.Since(g.last), g.onTimer)
	}
}

func (g *growth) onTimer() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.timer = nil
	if !g.closed {
		g.flushLocked()
	}
}

// flush stores and shows every delta not yet stored. The turn calls it
// before it publishes anything else, so that events keep their order.
func (g *growth) flush() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.flushLocked()
}

func (g *growth) flushLocked() {
	gp := g.pending
	g.pending = nil
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	if gp == nil || gp.text.Len() == gp.flushed {
		return // nothing written: the next delta may go at once
	}
	g.last = time.Now()
	all := gp.text.String()
	delta := all[gp.flushed:]
	gp.flushed = len(all)
	t := g.t
	if !gp.stored {
		p := *gp.p
		p.Text = all
		gp.stored = t.putPart(g.ctx, p)
	} else {
		gp.seq++
		if err := t.svc.opts.Store.AppendPart(g.ctx, *gp.p, gp.seq, delta); err != nil {
			t.svc.log.Error("cannot store a part of the turn", "session", t.id, "part", gp.p.ID, "err", err)
			gp.stored = false // the next write puts the whole part
		}
	}
	t.publish(agent.Event{Kind: gp.event, MessageID: gp.p.MessageID, PartID: gp.p.ID, Text: delta})
}

// end stores and shows what is pending, and sets part p's text to all that
// streamed into it, for the caller to put it whole.
func (g *growth) end(p *agent.Part) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.flushLocked()
	if gp := g.parts[p]; gp != nil {
		p.Text = gp.text.String()
		delete(g.parts, p)
	}
}

// grown reports whether part p streamed text that end has not yet set.
func (g *growth) grown(p *agent.Part) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.parts[p] != nil
}

// close flushes and stops the timer; add must not be called after it.
func (g *growth) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.flushLocked()
	g.closed = true
}

// putPart writes a part whole and reports whether it was stored (see save).
func (t *turn) putPart(ctx context.Context, p agent.Part) bool {
	if err := t.svc.opts.Store.PutPart(context.WithoutCancel(ctx), p); err != nil {
		t.svc.log.Error("cannot store a part of the turn", "session", t.id, "part", p.ID, "err", err)
		return false
	}
	return true
}

// terminal stores a running command's output as it streams (what
// Env.Progress is given, whole so far), as appends to the call's part, so
// that after a crash the part shows what the command had printed. Output
// that no longer extends what was stored (the capture keeps only the head
// and tail of a long output) is not stored; the call's result, put whole
// when it ends, has it. Its caller serializes write and done.
type terminal struct {
	t      *turn
	ctx    context.Context
	p      agent.Part
	stored int // bytes of output stored
	last   string
	seq    int
	done   bool
}

func (w *terminal) write(output string) {
	if w.done || len(output) <= w.stored || !strings.HasPrefix(output, w.last) {
		return
	}
	w.seq++
	if err := w.t.svc.opts.Store.AppendPart(context.WithoutCancel(w.ctx), w.p, w.seq, output[w.stored:]); err != nil {
		w.t.svc.log.Error("cannot store a command's output", "session", w.t.id, "part", w.p.ID, "err", err)
		w.done = true
		return
	}
	w.stored, w.last = len(output), output
}
