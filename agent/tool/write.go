package tool

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/tool/internal/textmatch"
)

//go:embed write.md
var writeDescription string

type writeInput struct {
	Path    string `json:"path" jsonschema:"the file to write, absolute or relative to the workspace root"`
	Content string `json:"content" jsonschema:"the file's whole new content"`
}

// newWrite returns the write tool.
func newWrite() Tool {
	return newTyped(Info{
		Name:        "write",
		Description: writeDescription,
		Kind:        agent.ToolKindEdit,
		Timeout:     30 * time.Second,
	}, nil, runWrite)
}

func runWrite(ctx context.Context, env *Env, in writeInput) (Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return Result{}, err
	}
	abs, err := resolvePath(ws, in.Path)
	if err != nil {
		return failure("invalid path", "%v", err), nil
	}
	shown := displayPath(ws.Root(), abs)
	title := "Write " + shown
	c, bad, err := loadWritable(ctx, ws, abs, shown)
	if bad != nil || err != nil {
		return deref(bad), err
	}
	if c.exists && env.Files != nil {
		if err := env.Files.Check(abs, c.before); err != nil {
			return failure("not read", "Not written: %v.", err), nil
		}
	}
	content := in.Content
	if c.exists {
		// Keep the file's form: a CRLF file stays CRLF, a BOM stays.
		_, form := decodeText(c.before)
		if form.crlf && strings.Contains(content, "\r\n") {
			form.crlf = false
		}
		if strings.HasPrefix(content, utf8BOM) {
			form.bom = false
		}
		c.after = form.encode(content)
	} else {
		c.after = []byte(content)
	}
	n := len(textmatch.SplitLines(content))
	if c.exists && string(c.after) == string(c.before) {
		return Result{Output: fmt.Sprintf("%s already holds this content; nothing was written.", shown), Title: title,
			Locations: []agent.Location{{Path: abs}}}, nil
	}
	if denied, ok, err := permitEdit(ctx, env, title, c); !ok {
		return denied, err
	}
	if res, err := save(ctx, env, ws, c); res != nil || err != nil {
		return deref(res), err
	}
	verb := "Wrote"
	if !c.exists {
		verb = "Created"
	}
	return Result{
		Output:    fmt.Sprintf("%s %s (%d lines, %d bytes).", verb, shown, n, len(c.after)) + unsavedNote(ws, c),
		Title:     title,
		Locations: []agent.Location{{Path: abs}},
		Diff:      c.diff(),
		Metadata:  metadata(map[string]any{"created": !c.exists, "bytes": len(c.after), "lines": n}),
	}, nil
}

// loadWritable is loadFile for write, which may replace a binary file.
func loadWritable(ctx context.Context, ws Workspace, abs, shown string) (fileChange, *Result, error) {
	c, bad, err := loadFile(ctx, ws, abs, shown)
	if bad != nil && bad.Title == "binary file" {
		content, rerr := ws.ReadFile(ctx, abs)
		if rerr == nil {
			return fileChange{abs: abs, shown: shown, exists: true, before: content}, nil, nil
		}
	}
	return c, bad, err
}
