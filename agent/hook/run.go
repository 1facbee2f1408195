package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/internal/child"
)

const (
	// outputMax bounds what is kept of a hook's standard output and
	// error; the rest is read and dropped. Claude Code caps hook output
	// at 10,000 characters too.
	outputMax = 10_000
	// stopGrace is the SIGTERM-to-SIGKILL wait when a hook is stopped.
	stopGrace = 500 * time.Millisecond
	// drainWait bounds the wait for a hook's output once its whole group
	// has gone (a process that left the group may hold the pipe).
	drainWait = time.Second
)

// outcome is how one hook run ended.
type outcome struct {
	code      int
	signal    string
	timedOut  bool
	cancelled bool
	startErr  error
	stdout    string
	stderr    string
	took      time.Duration
}

// runOne runs one hook with payload on its standard input.
func (e *Engine) runOne(ctx context.Context, h Hook, payload []byte) outcome {
	if h.Type == "prompt" {
		return e.askOne(ctx, h, payload)
	}
	began := time.Now()
	root := e.opts.Root
	env := append(slices.Clip(e.opts.Environ), "CLAUDE_PROJECT_DIR="+root, "DARMAN_PROJECT_DIR="+root, "DARMAN_HOOK_EVENT="+string(h.Event))
	cmd, err := e.opts.Command(h, root, env)
	if err != nil {
		return outcome{startErr: err}
	}
	p, err := child.Start(cmd, child.Options{Name: "hook " + string(h.Event) + ": " + h.Command, Registry: e.opts.Children, Stdin: true})
	if err != nil {
		return outcome{startErr: err}
	}
	go func() {
		// A hook need not read its input; a full pipe must not hold us.
		p.Stdin.Write(payload)
		p.Stdin.Close()
	}()
	var stdout, stderr capped
	var readers sync.WaitGroup
	for _, r := range []struct {
		f *os.File
		b *capped
	}{{p.Stdout, &stdout}, {p.Stderr, &stderr}} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			io.Copy(r.b, r.f)
		}()
	}
	o := outcome{}
	timer := time.NewTimer(h.Timeout)
	defer timer.Stop()
	select {
	case <-p.Exited():
	case <-timer.C:
		o.timedOut = true
	case <-ctx.Done():
		o.cancelled = true
	}
	// Stopped in every case: what the hook started in the background
	// goes with it.
	p.Stop(stopGrace)
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainWait):
	}
	p.Stdout.Close()
	p.Stderr.Close()
	<-drained
	o.code, o.signal = p.ExitCode()
	o.stdout, o.stderr = stdout.String(), stderr.String()
	o.took = time.Since(began)
	return o
}

// logRun logs one run at debug level: how it ended and, unless the
// hook's JSON says suppressOutput (Claude Code keeps such output out of
// its transcript view; darman's debug log is that view), what it wrote.
func (e *Engine) logRun(h Hook, o outcome) {
	attrs := []any{"event", h.Event, "hook", h.label(), "code", o.code, "signal", o.signal, "timedOut", o.timedOut, "took", o.took}
	if !o.suppressed() {
		attrs = append(attrs, "stdout", o.stdout, "stderr", o.stderr)
	}
	e.log.Debug("hook ran", attrs...)
}

// suppressed reports whether the hook's JSON output asks for its output
// to be kept out of view.
func (o outcome) suppressed() bool {
	var js struct {
		SuppressOutput bool `json:"suppressOutput"`
	}
	out := strings.TrimSpace(o.stdout)
	return strings.HasPrefix(out, "{") && json.Unmarshal([]byte(out), &js) == nil && js.SuppressOutput
}

// capped keeps the first outputMax bytes written to it.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := outputMax - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	if c.buf.Len()+len(p) > outputMax {
		c.cut = true
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.ToValidUTF8(c.buf.String(), "")
	if c.cut {
		s += "\n[… hook output cut at 10,000 bytes …]"
	}
	return s
}

// output is Claude Code's JSON output of a hook.
type output struct {
	Continue      *bool  `json:"continue"`
	StopReason    string `json:"stopReason"`
	SystemMessage string `json:"systemMessage"`
	Decision      string `json:"decision"`
	Reason        string `json:"reason"`
	Specific      struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		AdditionalContext        string          `json:"additionalContext"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

// blocks reports whether exit code 2 blocks ev; for the others it is
// shown to the user only.
func blocks(ev Event) bool {
	switch ev {
	case PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop:
		return true
	}
	return false
}

// plainContext reports whether ev takes a hook's plain output as context.
func plainContext(ev Event) bool { return ev == UserPromptSubmit || ev == SessionStart }

// apply adds what one hook's run came to to res.
func (o outcome) apply(ev Event, h Hook, res *Result) {
	name := fmt.Sprintf("%s hook %q (%s)", ev, h.label(), h.Origin)
	fail := func(format string, a ...any) {
		res.Failures = append(res.Failures, name+" "+fmt.Sprintf(format, a...))
	}
	block := func(reason string) {
		reason = strings.TrimSpace(reason)
		if reason == "" {
			reason = "blocked by the " + name
		}
		res.Block = true
		res.Reason = joinLine(res.Reason, reason)
	}
	// A PreToolUse hook guards the call: one that did not run to an
	// answer (it could not start, bash could not run or find its program,
	// it was stopped) blocks it, and says why, where Claude Code lets the
	// call run. A guard that fails open guards nothing.
	guard := func(format string, a ...any) {
		why := fmt.Sprintf(format, a...)
		fail("%s", why)
		if ev == PreToolUse {
			block("the call was blocked because its guard, the " + name + ", " + why)
		}
	}
	switch {
	case o.cancelled:
		return
	case o.startErr != nil:
		guard("could not start: %v", o.startErr)
		return
	case o.timedOut:
		guard("did not finish within %s and was stopped", h.Timeout)
		return
	case o.signal != "":
		guard("was killed by signal %s%s", o.signal, detail(o.stderr))
		return
	case o.code == 126 || o.code == 127:
		guard("could not run its program (exit code %d: %s)%s", o.code, map[int]string{126: "not executable or not readable", 127: "not found"}[o.code], detail(o.stderr))
		return
	case o.code == 2 && blocks(ev):
		block(o.stderr)
		return
	case o.code == 2:
		res.Messages = append(res.Messages, strings.TrimSpace(name+": "+strings.TrimSpace(o.stderr)))
		return
	case o.code != 0:
		fail("failed with exit code %d%s", o.code, detail(o.stderr))
		return
	}
	out := strings.TrimSpace(o.stdout)
	var js output
	if !strings.HasPrefix(out, "{") {
		if out != "" && plainContext(ev) {
			res.Context = append(res.Context, out)
		}
		return
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		fail("wrote output that starts as JSON but is not valid JSON (%v); it is ignored", err)
		return
	}
	if js.Continue != nil && !*js.Continue {
		res.Stop = true
		res.StopReason = joinLine(res.StopReason, js.StopReason)
	}
	if js.SystemMessage != "" {
		res.Messages = append(res.Messages, js.SystemMessage)
	}
	if c := strings.TrimSpace(js.Specific.AdditionalContext); c != "" {
		res.Context = append(res.Context, c)
	}
	if ev == PreToolUse {
		decision, reason := js.Specific.PermissionDecision, js.Specific.PermissionDecisionReason
		switch {
		case decision == "" && js.Decision == "block": // the older spelling
			decision = "deny"
		case decision == "" && js.Decision == "approve":
			decision = "allow"
		}
		if reason == "" {
			reason = js.Reason
		}
		switch decision {
		case "deny":
			block(reason)
		case "ask":
			res.Ask = true
			res.AskReason = joinLine(res.AskReason, reason)
		case "allow":
			res.Allow = true
			res.AllowReason = joinLine(res.AllowReason, reason)
		case "", "defer":
		default:
			fail("gave permissionDecision %q, which is not allow, deny or ask; it is ignored", decision)
		}
		if u := js.Specific.UpdatedInput; len(u) > 0 && string(u) != "null" && res.updated == nil {
			if !strings.HasPrefix(strings.TrimSpace(string(u)), "{") {
				fail("gave an updatedInput that is not a JSON object; the call runs with its own input")
			} else {
				res.updated = u
			}
		}
		return
	}
	if js.Decision == "block" && blocks(ev) {
		block(js.Reason)
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

func detail(stderr string) string {
	if s := strings.TrimSpace(stderr); s != "" {
		return ": " + s
	}
	return ""
}

func joinLine(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
