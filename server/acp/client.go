package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// workspace is the agent's tool.Workspace for one working directory. The
// directory's own (its language servers') is the disk; a session's
// (Setup.WorkspaceFor) reads a text file through the session's client
// when the client offers fs/read_text_file, so the agent sees its unsaved
// buffers, and with fs/write_text_file writes go through the client,
// which updates its buffer and saves it, and darman does not write the
// file itself. In a read-only session it refuses every write.
type workspace struct {
	s    *Server
	disk *tool.Disk
	// id is the session whose client reads and writes; "" for the disk.
	id agent.ID
}

func newWorkspace(s *Server, root string) *workspace {
	return &workspace{s: s, disk: tool.NewDisk(root)}
}

// of is the workspace of session id.
func (w *workspace) of(id agent.ID) *workspace { return &workspace{s: w.s, disk: w.disk, id: id} }

// session is the open session the workspace reads and writes for; nil for
// the directory's own, or once the client closed the connection.
func (w *workspace) session() *liveSession {
	if w.id == "" {
		return nil
	}
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.sessions[w.id]
}

func (w *workspace) Root() string { return w.disk.Root() }

// ReadFile asks the client for a text file's content; binary files, and
// files of sessions whose client does not read for darman, come from the
// disk.
func (w *workspace) ReadFile(ctx context.Context, path string) ([]byte, error) {
	ls := w.session()
	if ls == nil || !w.s.caps().FS.ReadTextFile {
		return w.disk.ReadFile(ctx, path)
	}
	disk, diskErr := w.disk.ReadFile(ctx, path)
	if diskErr == nil && looksBinary(disk) {
		return disk, nil
	}
	var res struct {
		Content string `json:"content"`
	}
	err := w.s.c.call(ctx, "fs/read_text_file", map[string]any{"sessionId": ls.id, "path": path}, &res)
	switch {
	case err == nil:
		return []byte(res.Content), nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case diskErr != nil:
		// Neither a buffer nor a file: keep the disk's error, which says
		// not found the way the tools expect.
		return nil, diskErr
	}
	return nil, fmt.Errorf("the editor could not read %s: %w", path, err)
}

// looksBinary reports a NUL byte in the first 8 KiB, which no text file
// an editor opens has.
func looksBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8<<10)], 0) >= 0
}

// WriteFile writes through the client when it offers fs/write_text_file,
// else to the disk.
func (w *workspace) WriteFile(ctx context.Context, path string, content []byte) error {
	ls := w.session()
	if ls == nil || !w.s.caps().FS.WriteTextFile {
		return w.disk.WriteFile(ctx, path, content)
	}
	err := w.s.c.call(ctx, "fs/write_text_file", map[string]any{"sessionId": ls.id, "path": path, "content": string(content)}, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the editor did not write %s: %w", path, err)
	}
	return nil
}

// Remove deletes a file from the disk (ACP has no delete).
func (w *workspace) Remove(ctx context.Context, path string) error {
	return w.disk.Remove(ctx, path)
}

// asker asks the user of one session with session/request_permission
// (Setup.AskerFor) what the session's mode left open (permission.Mode)
// outside a turn's stream: a turn's own questions come on its stream
// (session.Turn.Questions, see liveSession.question).
type asker struct {
	s  *Server
	id agent.ID
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

func (a *asker) Ask(ctx context.Context, req permission.Request) (permission.Reply, error) {
	a.s.mu.Lock()
	ls := a.s.sessions[a.id]
	a.s.mu.Unlock()
	if ls == nil {
		return permission.Reply{Answer: permission.RejectOnce, Message: "no client session to ask in"}, nil
	}
	q, err := ls.askPermission(ctx, req)
	if err != nil {
		return permission.Reply{}, err
	}
	return q.wait()
}

// permissionQuestion is a session/request_permission sent, its answer to
// come.
type permissionQuestion struct {
	p       *pending
	options []permissionOption
}

// askPermission sends session/request_permission for req now, after
// every update sent before it.
func (ls *liveSession) askPermission(ctx context.Context, req permission.Request) (*permissionQuestion, error) {
	title := req.Title
	if title == "" {
		title = req.Permission + " " + strings.Join(req.Patterns, ", ")
	}
	call := map[string]any{"toolCallId": req.CallID, "title": title}
	var content []toolCallContent
	add := func(d agent.Diff) {
		old, updated := d.OldText, d.NewText
		content = append(content, toolCallContent{Type: "diff", Path: d.Path, OldText: &old, NewText: &updated})
	}
	for _, d := range req.Diffs {
		add(d)
	}
	if len(req.Reasons) > 0 {
		content = append(content, toolCallContent{Type: "content", Content: text(strings.Join(req.Reasons, "\n"))})
	}
	if content != nil {
		call["content"] = content
	}
	always := "Always allow"
	if len(req.Suggest) > 0 {
		always += " " + strings.Join(req.Suggest, ", ")
	}
	options := []permissionOption{
		{string(permission.AllowOnce), "Allow once", "allow_once"},
		{string(permission.AllowAlways), always, "allow_always"},
		{string(permission.RejectOnce), "Reject", "reject_once"},
		{string(permission.RejectAlways), "Always reject", "reject_always"},
	}
	p, err := ls.s.c.ask(ctx, "session/request_permission", map[string]any{"sessionId": ls.id, "toolCall": call, "options": options})
	if err != nil {
		return nil, err
	}
	return &permissionQuestion{p: p, options: options}, nil
}

// wait reads the user's answer.
func (q *permissionQuestion) wait() (permission.Reply, error) {
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if err := q.p.wait(&res); err != nil {
		return permission.Reply{}, err
	}
	switch res.Outcome.Outcome {
	case "selected":
		for _, o := range q.options {
			if o.OptionID == res.Outcome.OptionID {
				return permission.Reply{Answer: permission.Answer(o.OptionID)}, nil
			}
		}
		return permission.Reply{}, fmt.Errorf("session/request_permission: the client chose %q, which is not one of the options", res.Outcome.OptionID)
	case "cancelled":
		return permission.Reply{Answer: permission.RejectOnce, Message: "the user dismissed the question"}, nil
	}
	return permission.Reply{}, fmt.Errorf("session/request_permission: outcome %q is neither selected nor cancelled", res.Outcome.Outcome)
}

// terminal runs a session's commands in the client's terminal
// (terminal/create, wait_for_exit, output, kill, release).
type terminal struct{ ls *liveSession }

// stopWait bounds the calls that stop and release a terminal once the
// turn is over.
const stopWait = 5 * time.Second

type exitStatus struct {
	ExitCode *int   `json:"exitCode"`
	Signal   string `json:"signal"`
}

// terminalCreate is the terminal/create request for c: the command line
// in the shell the bash tool found (tool.ShellArgv: bash -c, or
// PowerShell's -Command on a Windows machine without Git bash, the
// language the line's permission was checked in), or wrapped in darman's
// sandbox helper when the tool gave one (c.Argv, with c.Env). With no
// shell found it is bash -c, as the line was then checked as bash.
func terminalCreate(session agent.ID, c tool.TerminalCommand) map[string]any {
	argv, err := tool.ShellArgv(c.Command)
	if err != nil {
		argv = []string{"bash", "-c", c.Command}
	}
	req := map[string]any{"sessionId": session, "command": argv[0], "args": argv[1:],
		"cwd": c.Dir, "outputByteLimit": c.OutputLimit}
	if len(c.Argv) > 0 {
		req["command"], req["args"] = c.Argv[0], c.Argv[1:]
		env := make([]map[string]string, 0, len(c.Env))
		for _, k := range slices.Sorted(maps.Keys(c.Env)) {
			env = append(env, map[string]string{"name": k, "value": c.Env[k]})
		}
		req["env"] = env
	}
	return req
}

func (t *terminal) Run(ctx context.Context, c tool.TerminalCommand) (tool.TerminalResult, error) {
	ls, conn := t.ls, t.ls.s.c
	var created struct {
		TerminalID string `json:"terminalId"`
	}
	if err := conn.call(ctx, "terminal/create", terminalCreate(ls.id, c), &created); err != nil {
		return tool.TerminalResult{}, err
	}
	if created.TerminalID == "" {
		return tool.TerminalResult{}, errors.New("terminal/create answered without a terminalId")
	}
	id := created.TerminalID
	ids := map[string]any{"sessionId": ls.id, "terminalId": id}
	if c.CallID != "" {
		ls.mu.Lock()
		ls.terminals[c.CallID] = id
		ls.mu.Unlock()
		// The call's update on the turn's stream shows the terminal now,
		// while the command runs (updateOf finds it in ls.terminals).
		if c.Started != nil {
			c.Started()
		}
	}
	after := func(method string) {
		stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopWait)
		defer cancel()
		if err := conn.call(stop, method, ids, nil); err != nil {
			ls.s.log.Debug("acp: "+method, "terminal", id, "err", err)
		}
	}
	defer after("terminal/release")

	exited := make(chan error, 1)
	var status exitStatus
	waitCtx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	go func() { exited <- conn.call(waitCtx, "terminal/wait_for_exit", ids, &status) }()
	timer := time.NewTimer(c.Timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case err := <-exited:
		if err != nil && ctx.Err() == nil {
			return tool.TerminalResult{}, err
		}
	case <-timer.C:
		timedOut = true
		after("terminal/kill")
		select {
		case <-exited:
		case <-time.After(stopWait):
		}
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		after("terminal/kill")
		return tool.TerminalResult{}, ctx.Err()
	}

	var out struct {
		Output     string      `json:"output"`
		Truncated  bool        `json:"truncated"`
		ExitStatus *exitStatus `json:"exitStatus"`
	}
	if err := conn.call(ctx, "terminal/output", ids, &out); err != nil {
		return tool.TerminalResult{}, err
	}
	if out.ExitStatus != nil {
		status = *out.ExitStatus
	}
	res := tool.TerminalResult{Output: out.Output, Truncated: out.Truncated, TimedOut: timedOut, Signal: status.Signal, ExitCode: -1}
	if status.ExitCode != nil {
		res.ExitCode = *status.ExitCode
	}
	return res, nil
}
