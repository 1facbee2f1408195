package lsp

import (
	"context"
	"strings"
	"sync"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/server/lsp/internal/buffer"
	"github.com/darman-dev/darman/server/lsp/internal/progress"
	"github.com/darman-dev/darman/server/lsp/internal/update"
)

// relay passes one session's events to the client: as darman/sessionUpdate
// notifications to a client that opted in, and otherwise through the
// fallbacks (progress, the transcript file, error messages). Each turn
// hands it the turn's events in the session's order (see
// session.Turn.Events) and keeps the turn's own books: which turn runs,
// and its questions, asked in that order (askOnStream). One relay serves a
// session the client has used, from then until the server stops or the
// session is deleted, and keeps its transcript current.
type relay struct {
	s       *Server
	a       *Agent
	session agent.ID
	done    chan struct{} // closed when run returns
	stop    context.CancelFunc

	mu    sync.Mutex
	dirty bool // the transcript is behind the session
}

// transcriptEvery is how often a transcript being watched is rewritten
// while its session changes.
const transcriptEvery = 300 * time.Millisecond

// run rewrites the transcript while the session changes, until ctx ends.
func (r *relay) run(ctx context.Context) {
	defer close(r.done)
	defer r.stop()
	tick := time.NewTicker(transcriptEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.mu.Lock()
			dirty := r.dirty
			r.dirty = false
			r.mu.Unlock()
			if dirty {
				r.s.writeTranscript(ctx, r.a, r.session)
			}
		}
	}
}

// handle passes one event of the turn turnID on, reporting it on prog
// when the client follows the turn by work-done progress (prog not nil).
func (r *relay) handle(turnID string, prog *progress.Progress, u session.Update) {
	e := u.Event
	// A sub-task's events come with its parent's: they are shown as part
	// of the parent's turn, but its own beginning and end are not the
	// parent's.
	own := e.SessionID == r.session && e.ParentCallID == ""
	if !own && (e.Kind == agent.EventState || e.Kind == agent.EventUserMessage) {
		return
	}
	opted := r.s.client.opt.SessionUpdates
	last := u.Last
	if opted {
		for _, u := range update.Of(e) {
			r.s.notifyUpdate(r.session, turnID, u)
		}
	}
	if e.Kind == agent.EventNotice {
		r.s.showMessage(protocol.MessageTypeWarning, "darman: "+e.Text)
	}
	if r.s.client.opt.OpenDiff && e.Kind == agent.EventToolCallUpdate && e.Tool != nil &&
		e.Tool.Status == agent.ToolCompleted && e.Tool.Diff != nil {
		r.s.openDiff(e.Tool)
	}
	if !opted {
		if r.s.transcriptOn() {
			r.mu.Lock()
			r.dirty = true
			r.mu.Unlock()
		}
		if prog != nil && e.Kind == agent.EventToolCallUpdate && e.Tool != nil && e.Tool.Status == agent.ToolRunning {
			title := e.Tool.Title
			if title == "" {
				title = e.Tool.Name
			}
			prog.Report("running " + title)
		}
		if prog != nil && e.Kind == agent.EventPermission && e.Permission != nil && e.Permission.Answer == "" {
			p := e.Permission
			what := p.Title
			if what == "" {
				what = p.Permission + " " + strings.Join(p.Subjects, ", ")
			}
			prog.Report("waiting for your permission: " + what)
		}
		if prog != nil && e.Kind == agent.EventElicitation && e.Elicitation != nil && e.Elicitation.Action == "" {
			prog.Report("waiting for your answer to the MCP server " + e.Elicitation.Server)
		}
	}
	if !last {
		return
	}
	state := update.StateOf(e)
	if !opted {
		// The transcript is complete before the client hears the end.
		r.mu.Lock()
		dirty := r.dirty
		r.dirty = false
		r.mu.Unlock()
		if dirty {
			r.s.writeTranscript(context.WithoutCancel(r.s.ctx), r.a, r.session)
		}
		msg := "done"
		switch state {
		case update.StateFailed:
			msg = "failed: " + e.Reason
			r.s.showMessage(protocol.MessageTypeError, "darman: the turn failed: "+e.Reason)
		case update.StateCancelled:
			msg = "cancelled"
		}
		if prog != nil {
			prog.End(msg)
		}
	}
}

// notice sends a notice update to a client that takes updates, and a log
// line to others.
func (r *relay) notice(level, msg string) {
	if r.s.client.opt.SessionUpdates {
		r.s.notifyUpdate(r.session, "", update.Notice(level, msg))
		return
	}
	r.s.logMessage(protocol.MessageTypeWarning, "darman: "+msg)
}

// notifyUpdate sends one darman/sessionUpdate.
func (s *Server) notifyUpdate(id agent.ID, turnID string, u update.Update) {
	err := s.conn.Notify(s.ctx, "darman/sessionUpdate", update.Params{SessionID: string(id), TurnID: turnID, Update: u})
	if err != nil {
		s.log.Debug("lsp: session update not sent", "session", id, "err", err)
	}
}

// openDiffParams are darman/openDiff's: the client shows the change in a
// diff view (the VS Code extension uses vscode.diff).
type openDiffParams struct {
	URI     string `json:"uri"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
	Title   string `json:"title"`
}

// openDiff asks a client that opted in to show the change a tool call made.
func (s *Server) openDiff(call *agent.ToolCall) {
	d := call.Diff
	title := call.Title
	if title == "" {
		title = call.Name + " " + d.Path
	}
	err := s.conn.Notify(s.ctx, "darman/openDiff", openDiffParams{URI: buffer.PathToURI(d.Path), OldText: d.OldText, NewText: d.NewText, Title: title})
	if err != nil {
		s.log.Debug("lsp: openDiff not sent", "path", d.Path, "err", err)
	}
}
