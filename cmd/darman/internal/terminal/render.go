package terminal

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/session"
)

// Renderer prints a turn's events for a shell: the answer's text on Out
// and one line per finished tool call, notice, retry and failure on Err; or, with
// JSON, every event as a JSON line on Out ({"seq":N,"event":{…}}) and, once
// the turn is over, one result line (see Result). It is used from one
// goroutine at a time (session.Turn.Events, then Result).
type Renderer struct {
	Out, Err io.Writer
	JSON     bool
	// Ask, when set, answers the turn's questions that come on its stream
	// (session.Turn.Questions): permission questions and MCP servers'
	// elicitations, each asked once the events before it are printed,
	// and before any after it.
	Ask     *Asker
	midLine bool // the answer text did not end with a newline yet
}

// Render prints one event of the turn, and asks its question.
func (r *Renderer) Render(u session.Update) {
	r.print(u)
	q := u.Question
	switch {
	case q == nil || r.Ask == nil:
	case q.Elicitation != nil:
		r.endLine()
		q.AnswerElicitation(r.Ask.Elicit(q.Context(), *q.Elicitation))
	default:
		r.endLine()
		q.Answer(r.Ask.Ask(q.Context(), q.Request))
	}
}

func (r *Renderer) print(u session.Update) {
	e := u.Event
	if r.JSON {
		b, _ := json.Marshal(struct {
			Seq   uint64      `json:"seq"`
			Event agent.Event `json:"event"`
		}{u.Seq, e})
		fmt.Fprintf(r.Out, "%s\n", b)
		return
	}
	// A sub-task's events are nested under its task call: its tool calls
	// and failure are shown indented; its text is not, since the sub-agent
	// answers the parent, which answers the user.
	nest := ""
	if e.ParentCallID != "" {
		nest = "  ↳ "
	}
	switch e.Kind {
	case agent.EventMessageChunk:
		if nest != "" {
			return
		}
		fmt.Fprint(r.Out, e.Text)
		r.midLine = !strings.HasSuffix(e.Text, "\n")
	case agent.EventToolCallUpdate:
		t := e.Tool
		if t.Status != agent.ToolCompleted && t.Status != agent.ToolFailed {
			return
		}
		r.endLine()
		line := "✓ " + t.Name
		if t.Title != "" {
			line += " " + t.Title
		}
		if t.Status == agent.ToolFailed {
			line = "✗ " + failure(t.Name, t.Title, t.Error)
		}
		fmt.Fprintln(r.Err, nest+line)
	case agent.EventNotice:
		r.endLine()
		fmt.Fprintf(r.Err, "%s! %s\n", nest, e.Text)
	case agent.EventRetry:
		r.endLine()
		fmt.Fprintf(r.Err, "%s… retrying in %s: %s\n", nest, e.Retry.Delay.Round(100_000_000), e.Retry.Reason)
	case agent.EventState:
		if e.State == agent.StateIdle || e.State == agent.StateFailed {
			r.endLine()
		}
		if e.State == agent.StateFailed {
			fmt.Fprintf(r.Err, "%s✗ %s\n", nest, e.Reason)
		}
	}
}

// ResultLine is the last line of a turn in JSON: what a script wants
// without stitching the chunks together (the shape of Claude Code's
// stream-json result).
type ResultLine struct {
	Type      string   `json:"type"` // "result"
	SessionID agent.ID `json:"sessionId"`
	// Result is the answer's text: the turn's last assistant message.
	Result string `json:"result"`
	// StopReason is how the turn ended: stop, length, step_limit,
	// cancelled, error, ….
	StopReason agent.Finish `json:"stopReason"`
	IsError    bool         `json:"isError"`
	Error      string       `json:"error,omitempty"`
	Usage      agent.Usage  `json:"usage"`
	CostUSD    float64      `json:"costUsd"`
	DurationMS int64        `json:"durationMs"`
}

// Result ends the turn's output: in JSON, one result line; as text,
// nothing (the answer was printed as it came).
func (r *Renderer) Result(res session.Result) {
	if !r.JSON {
		return
	}
	b, _ := json.Marshal(ResultLine{Type: "result", SessionID: res.Session, Result: res.Text, StopReason: res.Finish,
		IsError: res.Finish == agent.FinishError, Error: res.Error, Usage: res.Usage, CostUSD: res.Cost,
		DurationMS: res.Duration.Milliseconds()})
	fmt.Fprintf(r.Out, "%s\n", b)
}

func (r *Renderer) endLine() {
	if r.midLine {
		fmt.Fprintln(r.Out)
		r.midLine = false
	}
}

// failure is a failed call's line: the tool, its title, and the error's
// first line, with what that line introduces when it ends in a colon (a
// hook's "blocked the call:" and its reason), the title left out when the
// error starts with it ("permission denied: ...").
func failure(tool, title, err string) string {
	text := strings.TrimSpace(err)
	line, rest, _ := strings.Cut(text, "\n")
	if strings.HasSuffix(line, ":") {
		next, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
		line += " " + next
	}
	if title == "" || strings.HasPrefix(strings.ToLower(line), strings.ToLower(title)) {
		return tool + " " + line
	}
	return tool + " " + title + ": " + line
}
