package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/internal/child"
)

// Event names when hooks run; the names are Claude Code's.
type Event string

// The events, and where a turn runs them.
const (
	// PreToolUse: before a tool call runs (after its arguments parsed).
	// Exit 2, decision "block" or permissionDecision "deny" stops the
	// call, the reason being its result for the model; "ask" asks the
	// user (permission hook); "allow" answers the call's permission
	// questions, where no one can be asked too, but never a rule's denial,
	// a protected path's question, nor a question the user's own ask rule
	// asks (agent/session; permission.Request.AskedBy).
	PreToolUse Event = "PreToolUse"
	// PostToolUse: after a tool call ran. Exit 2 or decision "block" adds
	// the reason to what the model reads of the result; additionalContext
	// is added too.
	PostToolUse Event = "PostToolUse"
	// UserPromptSubmit: before the user's message is stored and sent.
	// Plain output and additionalContext are added to it for the model;
	// exit 2 or decision "block" ends the turn with nothing sent, the
	// reason shown to the user.
	UserPromptSubmit Event = "UserPromptSubmit"
	// Stop: the model answered without calling a tool. Exit 2 or decision
	// "block" sends the reason to the model and the turn goes on (a few
	// times at most; stop_hook_active tells the hook it is one of those).
	Stop Event = "Stop"
	// SubagentStop: Stop for a sub-task's turn (the task tool's child).
	SubagentStop Event = "SubagentStop"
	// PreCompact: before the history is summarized (trigger "auto").
	PreCompact Event = "PreCompact"
	// SessionStart: before a session's first turn in this process
	// (source "startup" for a new session, "resume" for one with
	// history). Its plain output and additionalContext are added to that
	// turn's message.
	SessionStart Event = "SessionStart"
	// SessionEnd: when the session service closes, for each session
	// that ran a turn (reason "other").
	SessionEnd Event = "SessionEnd"
	// Notification: when the user is asked a permission question
	// (notification_type "permission_prompt").
	Notification Event = "Notification"
)

// Events are every event, in the order the docs list them.
func Events() []Event {
	return []Event{PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, PreCompact, SessionStart, SessionEnd, Notification}
}

// DefaultTimeout is how long a hook that sets none may run, as in Claude
// Code.
const DefaultTimeout = 60 * time.Second

// PromptTimeout is how long a prompt hook that sets none waits for the
// model, as in Claude Code.
const PromptTimeout = 30 * time.Second

// Hook is one configured command hook.
type Hook struct {
	Event Event
	// Matcher is as written: "" and "*" match everything, names
	// separated by | match those names, anything else is a regular
	// expression matched anywhere in the name.
	Matcher string
	// Command is the shell command line.
	Command string
	// Timeout bounds one run; zero means DefaultTimeout.
	Timeout time.Duration
	// Origin is the file the hook came from.
	Origin string
	// Type is the hook's kind as configured: "" and "command" run
	// Command; "prompt" asks the model Prompt (Options.Ask); another
	// (Claude Code's "agent", "http") is reported by New as unsupported
	// and does not run.
	Type string
	// Prompt is a prompt hook's question; $ARGUMENTS in it is replaced
	// by the event's JSON (which is appended when it has none).
	Prompt string
	// Workspace reports that the hook came from the workspace's own files
	// (a trusted workspace's), not the user's: Options.Command confines
	// it as the model's commands are.
	Workspace bool
}

// label names the hook in messages: its command, or its prompt.
func (h Hook) label() string {
	if h.Type == "prompt" {
		return "prompt " + clip(h.Prompt, 60)
	}
	return h.Command
}

// Options configure an Engine.
type Options struct {
	// Hooks are the configured hooks, darman's before Claude Code's; a
	// command given twice for the same event and matcher runs once, as
	// the first one says.
	Hooks []Hook
	// Root is the workspace root: where hooks run, and their
	// CLAUDE_PROJECT_DIR and DARMAN_PROJECT_DIR; required.
	Root string
	// Environ is the hooks' environment (NAME=value, secrets already
	// filtered out: see internal/childenv); nil means none but what the
	// engine sets.
	Environ []string
	// Command makes the process hook h's command line runs as, in dir
	// with environ (tool.ShellCommand): the workspace's hooks in the OS
	// sandbox when there is one, the user's as the user's programs;
	// required.
	Command func(h Hook, dir string, environ []string) (*exec.Cmd, error)
	// Children records the hooks' process groups; nil records nothing.
	Children *child.Registry
	// Logger receives a line per hook run at debug level, with the
	// hook's standard output unless its JSON says suppressOutput; nil
	// discards.
	Logger *slog.Logger
	// Transcript returns the path of the session's transcript, written
	// or brought up to date for the hooks about to run (transcript_path
	// in their input, see WriteTranscript); nil, or "" returned, leaves
	// transcript_path empty.
	Transcript func(ctx context.Context, session string) string
	// Ask puts a prompt hook's question to the small model, with system
	// as its instructions, and returns the answer's text; nil leaves
	// prompt hooks out (reported by New).
	Ask func(ctx context.Context, system, prompt string) (string, error)
	// Close releases what Command runs in (a sandbox of the hooks' own),
	// once the engine's runs have ended; nil releases nothing.
	Close func() error
}

// Engine runs the configured hooks. Its methods are safe for concurrent
// use.
type Engine struct {
	opts    Options
	log     *slog.Logger
	byEvent map[Event][]compiled
	// async are the runs started by Go, waited for by Close.
	async sync.WaitGroup
}

// compiled is a hook with its matcher made.
type compiled struct {
	Hook
	match matcher
}

// New returns an engine for opts.Hooks. A hook whose event darman does
// not know or whose matcher is not a valid regular expression is left
// out, and said so in the returned problems (one line each, naming its
// file); the others run.
func New(opts Options) (*Engine, []string, error) {
	if opts.Root == "" || opts.Command == nil {
		return nil, nil, errors.New("hook.New: Root and Command are required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{opts: opts, log: log, byEvent: map[Event][]compiled{}}
	var problems []string
	type key struct {
		event            Event
		matcher, command string
	}
	seen := map[key]bool{}
	for _, h := range opts.Hooks {
		switch {
		case h.Type == "prompt" && opts.Ask == nil:
			problems = append(problems, fmt.Sprintf("%s: a %s prompt hook cannot run: no model is configured to answer it (smallModel or model); this hook does not run", h.Origin, h.Event))
			continue
		case h.Type != "" && h.Type != "command" && h.Type != "prompt":
			problems = append(problems, fmt.Sprintf("%s: a %s hook of type %q is not supported: darman runs command and prompt hooks; this hook does not run (write it as a command hook)", h.Origin, h.Event, h.Type))
			continue
		}
		if !slices.Contains(Events(), h.Event) {
			problems = append(problems, fmt.Sprintf("%s: hook event %q is not one darman runs; the hook is ignored", h.Origin, h.Event))
			continue
		}
		m, err := compile(h.Matcher)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s hook matcher %q: %v; the hook is ignored", h.Origin, h.Event, h.Matcher, err))
			continue
		}
		k := key{h.Event, strings.TrimSpace(h.Matcher), strings.TrimSpace(h.Command) + "\x00" + strings.TrimSpace(h.Prompt)}
		if seen[k] {
			continue
		}
		seen[k] = true
		if h.Timeout <= 0 {
			h.Timeout = DefaultTimeout
			if h.Type == "prompt" {
				h.Timeout = PromptTimeout
			}
		}
		e.byEvent[h.Event] = append(e.byEvent[h.Event], compiled{Hook: h, match: m})
	}
	return e, problems, nil
}

// Hooks returns the hooks the engine runs, by event in the order of
// Events, for doctor.
func (e *Engine) Hooks() []Hook {
	var out []Hook
	for _, ev := range Events() {
		for _, c := range e.byEvent[ev] {
			out = append(out, c.Hook)
		}
	}
	return out
}

// Has reports whether any hook is configured for ev: a caller skips
// building an Input when none is.
func (e *Engine) Has(ev Event) bool {
	return e != nil && len(e.byEvent[ev]) > 0
}

// Input is what a hook is told of its event. Session, Cwd and Event are
// always set; the rest as the event has them.
type Input struct {
	Event   Event
	Session string
	// Cwd is where the session works; "" means the engine's Root.
	Cwd string
	// Tool, ToolInput, ToolUseID and ToolResponse are the call of a tool
	// event: darman's tool name (hooks read Claude Code's, see ToolName),
	// its input, its id and, for PostToolUse, its result.
	Tool         string
	ToolInput    json.RawMessage
	ToolUseID    string
	ToolResponse any
	// Prompt is UserPromptSubmit's message.
	Prompt string
	// StopHookActive is set on Stop and SubagentStop when the turn goes
	// on because a Stop hook blocked it before.
	StopHookActive bool
	// LastMessage is the model's last answer, for Stop and SubagentStop.
	LastMessage string
	// Source is SessionStart's: startup or resume.
	Source string
	// Reason is SessionEnd's: other.
	Reason string
	// TranscriptPath is the session's transcript file; "" means the
	// engine's Options.Transcript says.
	TranscriptPath string
	// Trigger is PreCompact's: manual or auto.
	Trigger string
	// Message and NotificationType are Notification's.
	Message          string
	NotificationType string
}

// subject is what the event's matchers match, nil for events whose
// matcher is not used.
func (in Input) subject() []string {
	switch in.Event {
	case PreToolUse, PostToolUse:
		return matchNames(in.Tool)
	case SessionStart:
		return []string{in.Source}
	case SessionEnd:
		return []string{in.Reason}
	case PreCompact:
		return []string{in.Trigger}
	case Notification:
		return []string{in.NotificationType}
	}
	return nil
}

// payload is the JSON a hook reads on its standard input, in Claude
// Code's keys.
func (in Input) payload(root string) []byte {
	cwd := in.Cwd
	if cwd == "" {
		cwd = root
	}
	m := map[string]any{
		"session_id":      in.Session,
		"cwd":             cwd,
		"hook_event_name": string(in.Event),
		"permission_mode": "default",
		"transcript_path": in.TranscriptPath,
	}
	switch in.Event {
	case PreToolUse, PostToolUse:
		m["tool_name"] = ToolName(in.Tool)
		m["tool_input"] = toolInput(in.Tool, root, in.ToolInput)
		m["tool_use_id"] = in.ToolUseID
		if in.Event == PostToolUse {
			m["tool_response"] = in.ToolResponse
		}
	case UserPromptSubmit:
		m["prompt"] = in.Prompt
	case Stop, SubagentStop:
		m["stop_hook_active"] = in.StopHookActive
		m["last_assistant_message"] = in.LastMessage
	case SessionStart:
		m["source"] = in.Source
	case SessionEnd:
		m["reason"] = in.Reason
	case PreCompact:
		m["trigger"] = in.Trigger
		m["custom_instructions"] = ""
	case Notification:
		m["message"] = in.Message
		m["notification_type"] = in.NotificationType
	}
	b, err := marshal(m)
	if err != nil {
		// Only ToolResponse could fail; the rest are strings.
		delete(m, "tool_response")
		b, _ = marshal(m)
	}
	return b
}

// marshal is json.Marshal without HTML escaping: a hook that greps its
// input for "a > b" finds it, as it does in Claude Code's.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Result is what the hooks of one event came to.
type Result struct {
	// Ran is how many hooks ran.
	Ran int
	// Block is set when a hook blocked (exit code 2, decision "block", or
	// for PreToolUse permissionDecision "deny"); Reason says why, each
	// hook's on its own line.
	Block  bool
	Reason string
	// Ask is set when a PreToolUse hook's permissionDecision is "ask"
	// (and none denied); AskReason is its permissionDecisionReason.
	Ask       bool
	AskReason string
	// Allow is set when a PreToolUse hook's permissionDecision is
	// "allow" (and none denied or asked); AllowReason is its reason, for
	// the user. It answers the call's permission questions, never a
	// rule's denial.
	Allow       bool
	AllowReason string
	// UpdatedInput is a PreToolUse hook's hookSpecificOutput.updatedInput
	// in darman's keys (see ToolInput): the input the call runs with
	// instead of the model's. The first hook's, in configured order, when
	// several give one; nil when none does.
	UpdatedInput json.RawMessage
	// Context is what the hooks add for the model: additionalContext, and
	// for UserPromptSubmit and SessionStart plain standard output.
	Context []string
	// Stop is set when a hook's JSON said "continue": false: the turn
	// ends after this step; StopReason is for the user.
	Stop       bool
	StopReason string
	// Messages are for the user (systemMessage).
	Messages []string
	// Failures are hooks that failed without blocking (another exit code,
	// a signal, a timeout, no start, output that starts as JSON but is
	// not), one line each, for the user.
	Failures []string

	// updated is the first updatedInput as the hook wrote it.
	updated json.RawMessage
}

// Run runs the hooks of in.Event that match, at the same time, and
// returns what they came to once all have ended. A hook is stopped when
// ctx is done.
func (e *Engine) Run(ctx context.Context, in Input) Result {
	var res Result
	if !e.Has(in.Event) {
		return res
	}
	var run []compiled
	subject := in.subject()
	for _, c := range e.byEvent[in.Event] {
		if subject == nil || c.match.matches(subject) {
			run = append(run, c)
		}
	}
	if len(run) == 0 {
		return res
	}
	if in.TranscriptPath == "" && e.opts.Transcript != nil {
		in.TranscriptPath = e.opts.Transcript(ctx, in.Session)
	}
	payload := in.payload(e.opts.Root)
	outs := make([]outcome, len(run))
	var wg sync.WaitGroup
	for i, c := range run {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = e.runOne(ctx, c.Hook, payload)
		}()
	}
	wg.Wait()
	for i, o := range outs {
		o.apply(in.Event, run[i].Hook, &res)
		e.logRun(run[i].Hook, o)
	}
	if res.updated != nil {
		res.UpdatedInput = darmanInput(in.Tool, e.opts.Root, toolInput(in.Tool, e.opts.Root, in.ToolInput), res.updated)
		res.updated = nil
	}
	if res.Block || res.Ask {
		res.Allow, res.AllowReason = false, ""
	}
	res.Ran = len(run)
	return res
}

// Go runs the hooks of in.Event as Run does but without waiting, for
// events nothing waits on (Notification); report, when set, gets the
// result. Close waits for them.
func (e *Engine) Go(ctx context.Context, in Input, report func(Result)) {
	if !e.Has(in.Event) {
		return
	}
	e.async.Add(1)
	go func() {
		defer e.async.Done()
		res := e.Run(context.WithoutCancel(ctx), in)
		if report != nil {
			report(res)
		}
	}()
}

// Close waits for the runs Go started, then calls Options.Close.
func (e *Engine) Close() error {
	if e == nil {
		return nil
	}
	e.async.Wait()
	if e.opts.Close != nil {
		return e.opts.Close()
	}
	return nil
}
