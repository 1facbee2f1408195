// Package transcript renders a stored session for people: plain text for
// `darman sessions show` and Markdown for `darman sessions export`.
package transcript

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent"
)

// Session is what the renderers read: a session and its messages in order.
type Session struct {
	Session  agent.Session
	Messages []agent.MessageWithParts
}

// Text writes s as readable plain text.
func Text(w io.Writer, s Session) error {
	p := &printer{w: w}
	p.f("%s  %s\n", s.Session.ID, title(s.Session))
	p.f("workspace %s · model %s · %d messages · updated %s\n", s.Session.Workspace, orDash(s.Session.Model),
		s.Session.Messages, s.Session.Updated.Local().Format(time.DateTime))
	for _, m := range s.Messages {
		p.f("\n── %s%s%s\n", who(m.Message), when(m.Message), turnID(m.Message))
		for _, part := range m.Parts {
			p.textPart(part)
		}
		p.ending(m.Message, "")
	}
	return p.err
}

// Markdown writes s as a Markdown document.
func Markdown(w io.Writer, s Session) error {
	p := &printer{w: w}
	p.f("# %s\n\n", title(s.Session))
	p.f("- Session: `%s`\n- Workspace: `%s`\n- Model: %s\n- Updated: %s\n", s.Session.ID, s.Session.Workspace,
		orDash(s.Session.Model), s.Session.Updated.UTC().Format(time.RFC3339))
	if s.Session.Cost > 0 {
		p.f("- Cost: $%.4f\n", s.Session.Cost)
	}
	for _, m := range s.Messages {
		p.f("\n## %s%s\n\n", who(m.Message), when(m.Message))
		for _, part := range m.Parts {
			p.markdownPart(part)
		}
		p.ending(m.Message, "> ")
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

func (p *printer) textPart(part agent.Part) {
	switch part.Kind {
	case agent.PartText:
		p.f("%s\n", strings.TrimRight(part.Shown(), "\n"))
	case agent.PartReasoning:
		p.f("%s\n", indent(strings.TrimRight(part.Text, "\n"), "  ┊ "))
	case agent.PartTool:
		if t := part.Tool; t != nil {
			p.f("  ⚙ %s\n", toolLine(t))
		}
	case agent.PartFile:
		if part.File != nil {
			p.f("  📎 %s (%s)\n", fileName(part.File), part.File.MIME)
		}
	case agent.PartCompaction:
		p.f("  [earlier conversation summarized]\n%s\n", indent(part.Text, "  "))
	case agent.PartError:
		p.f("  ✗ %s\n", part.Text)
	}
}

func (p *printer) markdownPart(part agent.Part) {
	switch part.Kind {
	case agent.PartText:
		p.f("%s\n\n", strings.TrimRight(part.Shown(), "\n"))
	case agent.PartReasoning:
		p.f("<details><summary>Thinking</summary>\n\n%s\n\n</details>\n\n", strings.TrimRight(part.Text, "\n"))
	case agent.PartTool:
		if t := part.Tool; t != nil {
			p.f("**Tool:** `%s`\n\n", toolLine(t))
			out := t.Output + t.Error
			if out == "" {
				// A command cut off while it ran: what it had printed
				// (stored as it streamed).
				out = t.Terminal
			}
			if out != "" {
				p.f("%s\n\n", fence(out))
			}
		}
	case agent.PartFile:
		if part.File != nil {
			p.f("*Attachment:* `%s` (%s)\n\n", fileName(part.File), part.File.MIME)
		}
	case agent.PartCompaction:
		p.f("*Earlier conversation, summarized:*\n\n%s\n\n", part.Text)
	case agent.PartError:
		p.f("**Error:** %s\n\n", part.Text)
	}
}

// ending says how an assistant message ended when that is not plain.
func (p *printer) ending(m agent.Message, prefix string) {
	switch {
	case m.Interrupted():
		p.f("%s[interrupted: darman stopped before this answer was finished]\n", prefix)
	case m.Finish == agent.FinishCancelled:
		p.f("%s[cancelled]\n", prefix)
	case m.Finish == agent.FinishError:
		p.f("%s[failed: %s]\n", prefix, m.Error)
	case m.Finish == agent.FinishLength:
		p.f("%s[stopped at the output limit]\n", prefix)
	case m.Finish == agent.FinishStepLimit:
		p.f("%s[stopped at the step limit]\n", prefix)
	}
}

func toolLine(t *agent.ToolCall) string {
	label := t.Title
	if label == "" {
		label = string(t.Input)
	}
	line := t.Name
	if label != "" {
		line += " " + oneLine(label, 100)
	}
	switch t.Status {
	case agent.ToolFailed:
		line += " — failed: " + oneLine(t.Error, 100)
	case agent.ToolPending, agent.ToolRunning:
		line += " — " + string(t.Status)
	}
	return line
}

func title(s agent.Session) string {
	if s.Title == "" {
		return "Untitled session"
	}
	return s.Title
}

func who(m agent.Message) string {
	if m.Role == agent.RoleUser {
		return "You"
	}
	if m.Model != "" {
		return "darman (" + m.Model + ")"
	}
	return "darman"
}

func when(m agent.Message) string {
	if m.Created.IsZero() {
		return ""
	}
	return " · " + m.Created.Local().Format(time.DateTime)
}

// turnID names a user message by the ID that names its turn, as
// sessions revert --turn and sessions fork take it.
func turnID(m agent.Message) string {
	if m.Role != agent.RoleUser || m.ID == "" {
		return ""
	}
	return " · " + string(m.ID)
}

func fileName(f *agent.File) string {
	if f.Path != "" {
		return f.Path
	}
	if f.Name != "" {
		return f.Name
	}
	return "inline"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// fence wraps s in a code fence longer than any run of backticks inside it.
func fence(s string) string {
	ticks := "```"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + strings.TrimRight(s, "\n") + "\n" + ticks
}
