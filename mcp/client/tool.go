package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// maxOutput caps what the model reads from one call.
const maxOutput = 64 << 10

// mcpTool is one server tool as the agent sees it. It belongs to the
// catalog generation it was listed in.
type mcpTool struct {
	b      *binding
	cat    *catalog
	raw    *mcp.Tool
	name   string
	schema json.RawMessage
}

func newTool(b *binding, cat *catalog, t *mcp.Tool, name string) *mcpTool {
	return &mcpTool{b: b, cat: cat, raw: t, name: name, schema: inputSchema(t.InputSchema)}
}

// inputSchema passes the server's schema through, fixing only what
// providers reject: an object schema without properties.
func inputSchema(s any) json.RawMessage {
	data, err := json.Marshal(s)
	if err != nil || string(data) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return data
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = json.RawMessage(`{}`)
		if fixed, err := json.Marshal(m); err == nil {
			return fixed
		}
	}
	return data
}

func (t *mcpTool) readOnly() bool {
	return t.b.def.Trusted && t.raw.Annotations != nil && t.raw.Annotations.ReadOnlyHint
}

func (t *mcpTool) Info() tool.Info {
	desc := t.raw.Description
	if desc == "" {
		desc = t.raw.Title
	}
	desc = fmt.Sprintf("%s\n\n(Tool %q of the MCP server %q.)", strings.TrimSpace(desc), t.raw.Name, t.b.def.Name)
	kind := agent.ToolKindOther
	if a := t.raw.Annotations; a != nil && a.ReadOnlyHint {
		kind = agent.ToolKindRead
	}
	return tool.Info{
		Name:        t.name,
		Description: desc,
		Schema:      t.schema,
		Kind:        kind,
		ReadOnly:    t.readOnly(),
		Timeout:     t.b.def.callTimeout(),
	}
}

func (t *mcpTool) errResult(msg string) tool.Result {
	return tool.Result{Output: msg, IsError: true, Title: t.name}
}

// Run asks the mcp permission, then calls the tool on the connection of
// its catalog generation, or on a fresh one if that connection is gone.
func (t *mcpTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	def := t.b.def
	if len(strings.TrimSpace(string(input))) == 0 {
		input = json.RawMessage(`{}`)
	}
	if !json.Valid(input) {
		return t.errResult("the arguments are not valid JSON; send a JSON object matching the tool's schema"), nil
	}
	if !t.readOnly() && env != nil && env.Permit != nil {
		meta := map[string]any{"server": def.Name, "tool": t.raw.Name, "input": input}
		if a := t.raw.Annotations; a != nil {
			meta["readOnlyHint"] = a.ReadOnlyHint
			if a.DestructiveHint != nil {
				meta["destructiveHint"] = *a.DestructiveHint
			}
		}
		err := env.Permit(ctx, permission.Call{Permission: permission.MCP, Subjects: []string{t.name}, Title: t.name, Metadata: meta})
		if err != nil {
			if res, ok := tool.Denied(err); ok {
				return res, nil
			}
			return tool.Result{}, err
		}
	}
	t.b.m.callStarted()
	defer t.b.m.callDone()
	c := t.cat.conn
	if c.isDead() {
		cat, err := t.b.ensure(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			return t.errResult(scrub(err.Error(), t.b.secrets)), nil
		}
		c = cat.conn
	}
	var progress func(string)
	if env != nil {
		progress = env.Progress
	}
	token, done := t.b.watchProgress(progress)
	defer done()
	clock := tool.NewClock(ctx, def.callTimeout())
	defer clock.Stop()
	// A person answering the server's elicitation stops the call's
	// timeout, and the loop's, which bounds the call too.
	pause := func() func() {
		resume := clock.Pause()
		if env == nil || env.Pause == nil {
			return resume
		}
		resumeLoop := env.Pause()
		return func() { resume(); resumeLoop() }
	}
	defer t.b.pausing(pause)()
	callCtx := context.WithValue(clock, pauseKey{}, pause)
	if env != nil && (env.Charge != nil || env.Elicit != nil) {
		// A sampling or elicitation request made within the call
		// (multi-round-trip) is served under callCtx; one an older
		// server sends meanwhile finds the call through the binding (see
		// binding.charger, binding.elicitor). Either is the call's
		// session's: charged to it, asked on its turn's stream.
		if env.Charge != nil {
			callCtx = context.WithValue(callCtx, chargeKey{}, env.Charge)
		}
		if env.Elicit != nil {
			callCtx = context.WithValue(callCtx, elicitKey{}, elicitFunc(env.Elicit))
		}
		defer t.b.charging(callCharge{session: string(env.SessionID), charge: env.Charge, elicit: env.Elicit})()
	}
	params := &mcp.CallToolParams{Name: t.raw.Name, Arguments: input}
	params.SetProgressToken(token)
	res, err := c.cs.CallTool(callCtx, params)
	if err != nil && ctx.Err() == nil && callCtx.Err() == nil && c.proc != nil {
		// A crash shows first as EOF; the reaper confirms it.
		select {
		case <-c.exited:
		case <-time.After(300 * time.Millisecond):
		}
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return tool.Result{}, ctx.Err()
		case clock.Expired():
			return t.errResult(fmt.Sprintf("mcp server %s: %s: %s did not answer within %s; the call was cancelled",
				def.Name, FailureCallTimeout, t.raw.Name, def.callTimeout())), nil
		case c.isDead() || c.exitStatus() != "" || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF):
			t.b.lost(c)
			return t.errResult(fmt.Sprintf("mcp server %s: %s during the call (%s); it restarts on the next call",
				def.Name, FailureCrashed, scrub(err.Error(), t.b.secrets))), nil
		default:
			return t.errResult(fmt.Sprintf("mcp server %s: %s", def.Name, scrub(err.Error(), t.b.secrets))), nil
		}
	}
	out := convert(t.name, res)
	if env != nil {
		if note := t.b.m.sessionDrift(string(env.SessionID)); note != "" {
			out.Output = note + "\n\n" + out.Output
		}
	}
	if dir := t.b.m.opts.FilesDir; dir != "" && len(out.Attachments) > 0 {
		var session string
		if env != nil {
			session = string(env.SessionID)
		}
		saveImages(&out, dir, session, def.Name)
	}
	return out, nil
}

// saveImages writes a result's images under dir/<session>/ and says where
// in the text, so the user can open them and a model that reads no images
// still knows they exist; the attachments keep their data for models that
// do.
func saveImages(out *tool.Result, dir, session, server string) {
	if session == "" {
		session = "no-session"
	}
	dir = filepath.Join(dir, sanitize(session))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	stamp := time.Now().UnixNano()
	for i := range out.Attachments {
		a := &out.Attachments[i]
		ext := ".bin"
		if exts, _ := mime.ExtensionsByType(a.MIME); len(exts) > 0 {
			ext = exts[len(exts)-1]
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-%d-%d%s", sanitize(server), stamp, i+1, ext))
		if os.WriteFile(path, a.Data, 0o600) != nil {
			continue
		}
		a.Name = path
		out.Output = strings.Replace(out.Output, fmt.Sprintf("[image %s attached]", a.MIME), fmt.Sprintf("[image %s saved to %s]", a.MIME, path), 1)
	}
}

// convert turns a call's result into what the model reads: text items
// concatenated, images attached, resource links listed, structured content
// as JSON when there is no text.
func convert(name string, res *mcp.CallToolResult) tool.Result {
	var (
		parts []string
		out   = tool.Result{IsError: res.IsError, Title: name}
	)
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			out.Attachments = append(out.Attachments, agent.File{Name: fmt.Sprintf("image-%d", len(out.Attachments)+1), MIME: c.MIMEType, Data: c.Data})
			parts = append(parts, fmt.Sprintf("[image %s attached]", c.MIMEType))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("resource: %s <%s>", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil {
				if r.Text != "" {
					parts = append(parts, r.Text)
				} else {
					parts = append(parts, fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))
				}
			}
		}
	}
	if res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			if len(parts) == 0 {
				parts = append(parts, string(data))
			}
			out.Metadata, _ = json.Marshal(map[string]json.RawMessage{"structuredContent": data})
		}
	}
	text := strings.Join(parts, "\n")
	if len(text) > maxOutput {
		text = text[:maxOutput] + fmt.Sprintf("\n[output cut at %d bytes]", maxOutput)
	}
	out.Output = text
	return out
}

// chargeKey holds, in a tool call's context, the function that charges
// model use to the call's session (tool.Env.Charge).
type chargeKey struct{}

// elicitKey holds, in a tool call's context, the function that asks the
// call's user on its turn's stream (tool.Env.Elicit).
type elicitKey struct{}

// pauseKey holds, in a tool call's context, the function that stops the
// call's timeout (see binding.pauseCalls).
type pauseKey struct{}
