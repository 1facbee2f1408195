package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
)

// compaction says how hard request must work to make the history fit.
type compaction int

const (
	// compactAsNeeded prunes and summarizes only when the estimate says
	// the request would not fit.
	compactAsNeeded compaction = iota
	// compactPrune: the provider refused the request as too long although
	// the estimate said it fits. Old tool outputs are pruned, and the
	// history summarized when pruning finds nothing to prune.
	compactPrune
	// compactSummarize: the provider refused the pruned request too.
	compactSummarize
)

// prunedOutput replaces, in the request only, the output of an old tool call.
const prunedOutput = "[output pruned to save context; run the tool again if you need it]"

// keepUserTurns is how many of the latest user turns keep their tool
// outputs when older ones are pruned.
const keepUserTurns = 2

// imageBytes is what an image is counted as in the estimate: about 1,500
// tokens, what a screenshot costs with the common APIs.
const imageBytes = 6000

// Bounds on what the summarizing call is sent and answers.
const (
	summaryMaxOutput = 4096
	// transcriptToolCap and transcriptTextCap bound one tool result and one
	// message text in the transcript the summary is written from.
	transcriptToolCap = 2 << 10
	transcriptTextCap = 8 << 10
	// requestCap bounds the user's latest message kept verbatim beside the
	// summary.
	requestCap = 8 << 10
)

func compactionPart(m agent.MessageWithParts) *agent.Part {
	for i := range m.Parts {
		if m.Parts[i].Kind == agent.PartCompaction {
			return &m.Parts[i]
		}
	}
	return nil
}

// budget is how many input tokens a request may take: the model's context
// window less the room its answer may need. Zero means unknown: nothing is
// compacted before the provider says so.
func (t *turn) budget() int {
	info := t.provider.Model(t.model)
	if info.ContextWindow <= 0 {
		return 0
	}
	out := info.MaxOutput
	if out <= 0 || out > info.ContextWindow/2 {
		out = info.ContextWindow / 2
	}
	return info.ContextWindow - out
}

// fit returns the messages to send so that a request with fixed bytes of
// system prompt and tool definitions fits the context window: msgs as they
// are when they fit, else with old tool outputs pruned, else summarized
// into a compaction message stored in the session.
func (t *turn) fit(ctx context.Context, msgs []agent.MessageWithParts, fixed int, force compaction) ([]agent.MessageWithParts, error) {
	budget := t.budget()
	over := func(m []agent.MessageWithParts, saved []int) bool {
		return budget > 0 && estimate(m, saved, fixed) > budget
	}
	t.svc.mu.Lock()
	pruning := t.live.pruning
	t.svc.mu.Unlock()
	if force == compactAsNeeded && !pruning && !over(msgs, nil) {
		return msgs, nil
	}
	pruned, saved := prune(msgs)
	didPrune := slices.ContainsFunc(saved, func(n int) bool { return n > 0 })
	if didPrune {
		t.svc.mu.Lock()
		t.live.pruning = true
		t.svc.mu.Unlock()
	}
	if force < compactSummarize && !over(pruned, saved) && (didPrune || force == compactAsNeeded) {
		return pruned, nil
	}
	if err := t.summarize(ctx, msgs, estimate(msgs, nil, fixed)); err != nil {
		return nil, fmt.Errorf("compacting the conversation to fit the model's context window: %w", err)
	}
	win, err := t.svc.opts.Store.Window(ctx, t.id)
	if err != nil {
		return nil, err
	}
	if over(win, nil) {
		return nil, fmt.Errorf("the request does not fit %s's context window of %d tokens even after compacting the conversation: "+
			"the system prompt, tool definitions and summary take about %d tokens; use a model with a larger context window, or fewer instruction files and tools",
			t.modelRef, budget, estimate(win, nil, fixed))
	}
	return win, nil
}

// prune returns msgs with the results of tool calls older than the last
// keepUserTurns user turns replaced by prunedOutput, and the bytes that
// saved in each message. msgs itself is not changed: the store keeps the
// originals, and only the request is smaller.
func prune(msgs []agent.MessageWithParts) ([]agent.MessageWithParts, []int) {
	saved := make([]int, len(msgs))
	cut, users := 0, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Message.Role == agent.RoleUser {
			if users++; users == keepUserTurns {
				cut = i
				break
			}
		}
	}
	out := slices.Clone(msgs)
	for i := range cut {
		var parts []agent.Part
		for j, p := range msgs[i].Parts {
			if p.Kind != agent.PartTool || p.Tool == nil {
				continue
			}
			before := resultBytes(p.Tool)
			c := *p.Tool
			c.Output, c.Attachments = prunedOutput, nil
			if c.Status == agent.ToolFailed {
				c.Error = prunedOutput
			}
			if after := resultBytes(&c); after < before {
				if parts == nil {
					parts = slices.Clone(msgs[i].Parts)
				}
				parts[j].Tool = &c
				saved[i] += before - after
			}
		}
		if parts != nil {
			out[i].Parts = parts
		}
	}
	return out, saved
}

// estimate is how many input tokens a request sending msgs would take,
// with fixed bytes of system prompt and tool definitions. The model's own
// count for the last answer in msgs covers everything up to that answer;
// what came after (that answer's tool results, later messages) is counted
// as a token per four bytes, as is everything when no answer reported
// usage. saved[i] is what pruning took out of msgs[i] since the counted
// request was sent; nil means nothing.
func estimate(msgs []agent.MessageWithParts, saved []int, fixed int) int {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i].Message; m.Role == agent.RoleAssistant && contextTokens(m.Usage) > 0 {
			last = i
			break
		}
	}
	if last < 0 {
		n := fixed
		for _, m := range msgs {
			n += messageBytes(m.Parts)
		}
		return n / 4
	}
	added := 0
	for _, p := range msgs[last].Parts {
		if p.Kind == agent.PartTool && p.Tool != nil {
			added += resultBytes(p.Tool)
		}
	}
	for _, m := range msgs[last+1:] {
		added += messageBytes(m.Parts)
	}
	for i := 0; i < last && i < len(saved); i++ {
		added -= saved[i]
	}
	return max(contextTokens(msgs[last].Message.Usage)+added/4, 0)
}

// contextTokens is what a model call's usage says the conversation took:
// its whole input and its answer, which the next call sends back.
func contextTokens(u agent.Usage) int {
	return int(u.Input + u.CacheRead + u.CacheWrite + u.Output)
}

func messageBytes(parts []agent.Part) int {
	n := 0
	for _, p := range parts {
		switch p.Kind {
		case agent.PartText, agent.PartReasoning:
			n += len(p.Text)
		case agent.PartCompaction:
			n += len(compactionText(p))
		case agent.PartFile:
			n += imageBytes
		case agent.PartTool:
			if p.Tool != nil {
				n += len(p.Tool.Name) + len(p.Tool.Input) + resultBytes(p.Tool)
			}
		}
	}
	return n
}

func resultBytes(t *agent.ToolCall) int {
	r := resultOf(t)
	return len(r.Text) + imageBytes*len(r.Images)
}

// compactionMeta is what a compaction part keeps besides the summary.
type compactionMeta struct {
	// Messages is how many messages the summary replaces.
	Messages int `json:"messages"`
	// Tokens is the estimate of their size that made darman compact.
	Tokens int `json:"tokens"`
	// Request is the user's latest message, verbatim (cut at requestCap),
	// sent with the summary so the model has the words of the task.
	Request string `json:"request,omitempty"`
	// Cleared marks /clear's part: no summary, the model is sent nothing
	// before it.
	Cleared bool `json:"cleared,omitempty"`
}

// cleared reports whether p is /clear's mark.
func cleared(p agent.Part) bool {
	var meta compactionMeta
	json.Unmarshal(p.Metadata, &meta)
	return meta.Cleared
}

// compactionText is how a compaction part reads to the model.
func compactionText(p agent.Part) string {
	var meta compactionMeta
	json.Unmarshal(p.Metadata, &meta)
	var b strings.Builder
	b.WriteString("The conversation so far was summarized to fit the context window; this summary replaces it.\n\n")
	b.WriteString(p.Text)
	if meta.Request != "" {
		b.WriteString("\n\nThe user's latest message, as they wrote it:\n\n")
		b.WriteString(meta.Request)
	}
	b.WriteString("\n\nContinue from here: go on with what remains, or answer the user if the work is done.")
	return b.String()
}

const summarySystem = `You write the working notes that let a coding agent continue a task it was doing, after its conversation is dropped to fit the model's context window. The agent will see nothing but your notes.`

const summaryInstruction = `Summarize the conversation above for the agent that will continue it. Be specific: keep file paths, function names, commands, error messages and numbers exactly. Use these sections:

Goal: what the user asked for, with their constraints and preferences.
Decisions: what was decided or learned, and why.
Files: each file read, created or changed, and what was done to it.
Done: what is finished and verified.
Remains: what is left to do, starting with the next step.`

// summarize has the model summarize msgs, and stores the summary as a
// compaction part in a new user message: the history sent from then on
// starts there. A user message, because every API wants the conversation
// to open with one, and the summary stands for what the user and the agent
// said; people see it marked as a summary. before is the estimated size of
// msgs, kept for the record.
func (t *turn) summarize(ctx context.Context, msgs []agent.MessageWithParts, before int) error {
	t.preCompact(ctx)
	info := t.provider.Model(t.model)
	out := summaryMaxOutput
	if info.MaxOutput > 0 {
		out = min(out, info.MaxOutput)
	}
	room := 32_000 // tokens, when the window is unknown
	if info.ContextWindow > 0 {
		out = min(out, info.ContextWindow/4)
		room = info.ContextWindow - out - (len(summarySystem)+len(summaryInstruction))/4 - 64
	}
	// Three bytes a token: the transcript is full of code, which tokenizes
	// worse than prose.
	text := transcript(msgs, max(room, 256)*3)

	t.publish(agent.Event{Kind: agent.EventState, State: agent.StateRunning, Reason: "compacting the conversation to fit the model's context window"})
	req := &llm.Request{
		Model:           t.model,
		System:          summarySystem,
		Messages:        []llm.Message{llm.UserText(text + "\n\n---\n\n" + summaryInstruction)},
		MaxOutputTokens: out,
	}
	stream := t.provider.Stream(ctx, req)
	var summary strings.Builder
	var usage agent.Usage
	var cost float64
	for stream.Next() {
		ev := stream.Event()
		switch ev.Kind {
		case llm.EventTextDelta:
			summary.WriteString(ev.Text)
		case llm.EventUsage:
			usage = agent.Usage{Input: int64(ev.Usage.Input), Output: int64(ev.Usage.Output), CacheRead: int64(ev.Usage.CacheRead),
				CacheWrite: int64(ev.Usage.CacheWrite), Reasoning: int64(ev.Usage.Reasoning)}
			cost = ev.Cost
		case llm.EventRetry:
			t.publish(agent.Event{Kind: agent.EventRetry, Retry: &agent.RetryInfo{Attempt: ev.Retry.Attempt, Delay: ev.Retry.Delay, Reason: retryReason(ev.Retry)}})
		}
	}
	stream.Close()
	if err := stream.Err(); err != nil {
		return fmt.Errorf("the summary call failed: %w", err)
	}
	text = strings.TrimSpace(summary.String())
	if text == "" {
		return errors.New("the model answered the request for a summary with no text")
	}

	// The summary is paid for: keep it even if the turn is being cancelled.
	ctx = context.WithoutCancel(ctx)
	now := time.Now().UTC()
	m := agent.Message{ID: agent.NewMessageID(), SessionID: t.id, Role: agent.RoleUser, Created: now, Completed: now,
		Model: t.modelRef, Usage: usage, Cost: cost}
	if err := t.svc.opts.Store.PutMessage(ctx, m); err != nil {
		return err
	}
	meta, _ := json.Marshal(compactionMeta{Messages: len(msgs), Tokens: before, Request: latestRequest(msgs)})
	t.save(ctx, agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: t.id, Kind: agent.PartCompaction, Text: text,
		Started: now, Ended: now, Metadata: meta})
	t.updateSession(ctx, func(s *agent.Session) { s.Usage = s.Usage.Add(usage); s.Cost += cost })
	t.publish(agent.Event{Kind: agent.EventUsage, MessageID: m.ID, Usage: &usage, Cost: cost})
	t.forgetWindow()
	t.publish(agent.Event{Kind: agent.EventState, State: agent.StateRunning})
	t.svc.log.Info("conversation compacted", "session", t.id, "messages", len(msgs), "tokens", before, "summary", len(text))
	return nil
}

// forgetWindow drops what the session kept of the history before a
// compaction: the pruning, and the directory instructions tool outputs
// held (they are added again when their directories are touched).
func (t *turn) forgetWindow() {
	t.svc.mu.Lock()
	t.live.pruning = false
	clear(t.live.instructed)
	t.svc.mu.Unlock()
}

// latestRequest is the user's last message in msgs, or the one an earlier
// compaction kept, cut at requestCap.
func latestRequest(msgs []agent.MessageWithParts) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Message.Role != agent.RoleUser {
			continue
		}
		if c := compactionPart(m); c != nil {
			var meta compactionMeta
			json.Unmarshal(c.Metadata, &meta)
			return meta.Request
		}
		var texts []string
		for _, p := range m.Parts {
			if p.Kind == agent.PartText {
				texts = append(texts, p.Text)
			}
		}
		if len(texts) > 0 {
			return capText(strings.Join(texts, "\n"), requestCap)
		}
	}
	return ""
}

// transcript renders msgs as text for the summarizing call, within max
// bytes: every tool result and message text capped, then, if still too
// long, the first entry (the task, or the previous summary) and as many of
// the latest entries as fit.
func transcript(msgs []agent.MessageWithParts, maxBytes int) string {
	var entries []string
	for _, m := range msgs {
		user := m.Message.Role == agent.RoleUser
		for _, p := range m.Parts {
			switch {
			case p.Kind == agent.PartCompaction:
				entries = append(entries, "## Summary of the conversation before\n\n"+capText(p.Text, transcriptTextCap))
			case p.Kind == agent.PartText && user:
				entries = append(entries, "## User\n\n"+capText(p.Text, transcriptTextCap))
			case p.Kind == agent.PartText && strings.TrimSpace(p.Text) != "":
				entries = append(entries, "## Assistant\n\n"+capText(p.Text, transcriptTextCap))
			case p.Kind == agent.PartTool && p.Tool != nil:
				r := resultOf(p.Tool)
				status := "result"
				if r.IsError {
					status = "error"
				}
				entries = append(entries, fmt.Sprintf("## Tool call: %s %s\n\n%s:\n%s", p.Tool.Name,
					capText(string(argsOrEmpty(p.Tool.Input)), transcriptToolCap/2), status, capText(r.Text, transcriptToolCap)))
			}
		}
	}
	const sep = "\n\n"
	total := 0
	for _, e := range entries {
		total += len(e) + len(sep)
	}
	if total <= maxBytes || len(entries) < 2 {
		return capText(strings.Join(entries, sep), maxBytes)
	}
	first := capText(entries[0], maxBytes/4)
	room := maxBytes - len(first) - 100
	start := len(entries)
	for start > 1 && room-len(entries[start-1])-len(sep) >= 0 {
		start--
		room -= len(entries[start]) + len(sep)
	}
	kept := []string{first}
	if start > 1 {
		kept = append(kept, fmt.Sprintf("[%d entries left out here to fit]", start-1))
	}
	return strings.Join(append(kept, entries[start:]...), sep)
}

// capText keeps the head and the tail of s within about n bytes, cut on
// character boundaries, with a note of what was left out.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	half := max(n/2-40, 0)
	i := half
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	j := len(s) - half
	for j < len(s) && !utf8.RuneStart(s[j]) {
		j++
	}
	head, tail := s[:i], s[j:]
	return fmt.Sprintf("%s\n[… %d bytes left out …]\n%s", head, len(s)-len(head)-len(tail), tail)
}
