package tool

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool/internal/textmatch"
)

//go:embed read.md
var readDescription string

// The read tool's caps.
const (
	readMaxLines    = 2000
	readMaxLineLen  = 2000
	readMaxBytes    = 256 << 10
	readMaxFileSize = 64 << 20 // larger files are refused before loading
	readMaxImage    = 5 << 20  // what model APIs accept for one image
)

type readInput struct {
	Path   string `json:"path" jsonschema:"the file or directory to read, absolute or relative to the workspace root"`
	Offset int    `json:"offset,omitempty" jsonschema:"the line number to start at, 1-based (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many lines to return (default and maximum 2000)"`
}

// newRead returns the read tool.
func newRead() Tool {
	return newTyped(Info{
		Name:        "read",
		Description: readDescription,
		Kind:        agent.ToolKindRead,
		ReadOnly:    true,
		Timeout:     30 * time.Second,
	}, func(s *jsonschema.Schema) {
		setMinimum(s, 0, "offset")
		setMinimum(s, 0, "limit")
	}, runRead)
}

func runRead(ctx context.Context, env *Env, in readInput) (Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return Result{}, err
	}
	abs, err := resolvePath(ws, in.Path)
	if err != nil {
		return failure("invalid path", "%v", err), nil
	}
	root := ws.Root()
	shown := displayPath(root, abs)
	// darman's own saved outputs need no permission: it wrote them.
	own := inOutputDir(env, abs)
	if !own {
		if denied, ok, err := permit(ctx, env, permission.Call{Permission: permission.Read, Subjects: []string{abs}, Title: "Read " + shown}); !ok {
			return denied, err
		}
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notFound(root, abs), nil
	case err != nil:
		return failure("unreadable", "Cannot read %s: %v", shown, err), nil
	case info.IsDir():
		return readDir(abs, shown, in)
	case !info.Mode().IsRegular():
		return failure("not a file", "%s is not a regular file (%s); read only reads files and directories.", shown, info.Mode().Type()), nil
	case imageExts[strings.ToLower(filepath.Ext(abs))] && info.Size() > readMaxImage:
		return failure("image too large", "%s is an image of %d MiB; images over %d MiB cannot be attached. Make a smaller copy with bash (e.g. ImageMagick's convert -resize) and read that.", shown, info.Size()>>20, readMaxImage>>20), nil
	case info.Size() > readMaxFileSize:
		return failure("too large", "%s is %d MiB, too large to read whole. Search it with grep, or look at parts of it with bash (head, tail, sed -n '100,200p').", shown, info.Size()>>20), nil
	}
	var content []byte
	if own {
		content, err = os.ReadFile(abs)
	} else {
		content, err = ws.ReadFile(ctx, abs)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(root, abs), nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return failure("unreadable", "Cannot read %s: %v", shown, err), nil
	}
	loc := []agent.Location{{Path: abs}}
	if mime := imageMIME(content); mime != "" {
		return readImage(env, abs, shown, content, mime, loc), nil
	}
	if isBinary(abs, content) {
		return failure("binary file", "%s is a binary file (%d bytes), which read cannot show. Inspect it with bash and a tool made for it (file, xxd | head, unzip -l, sqlite3, ...).", shown, len(content)), nil
	}
	if env.Files != nil {
		env.Files.Record(abs, content)
	}
	return readText(abs, shown, content, in, loc), nil
}

func readImage(env *Env, abs, shown string, content []byte, mime string, loc []agent.Location) Result {
	if len(content) > readMaxImage {
		return failure("image too large", "%s is a %s image of %d MiB; images over %d MiB cannot be attached. Make a smaller copy with bash (e.g. ImageMagick's convert -resize) and read that.", shown, mime, len(content)>>20, readMaxImage>>20)
	}
	if env.Files != nil {
		env.Files.Record(abs, content)
	}
	return Result{
		Output:      fmt.Sprintf("%s is a %s image (%d bytes); it is attached.", shown, mime, len(content)),
		Title:       shown,
		Locations:   loc,
		Attachments: []agent.File{{Name: filepath.Base(abs), MIME: mime, Path: abs, Data: content}},
		Metadata:    metadata(map[string]any{"mime": mime, "bytes": len(content)}),
	}
}

func readText(abs, shown string, content []byte, in readInput, loc []agent.Location) Result {
	text, _ := decodeText(content)
	lines := textmatch.SplitLines(text)
	total := len(lines)
	if total == 0 {
		return Result{Output: fmt.Sprintf("%s is empty.", shown), Title: shown, Locations: loc, Metadata: metadata(map[string]any{"lines": 0})}
	}
	start := max(in.Offset, 1)
	if start > total {
		return failure("offset past the end", "offset %d is past the end of %s, which has %d lines.", start, shown, total)
	}
	limit := in.Limit
	if limit <= 0 || limit > readMaxLines {
		limit = readMaxLines
	}
	var b strings.Builder
	end := start - 1 // the last line shown
	cutLines := 0
	full := false
	for i := start - 1; i < total && i < start-1+limit; i++ {
		line := strings.TrimSuffix(lines[i], "\r")
		if len(line) > readMaxLineLen {
			line = truncateLine(line, readMaxLineLen)
			cutLines++
		}
		entry := fmt.Sprintf("%6d\t%s\n", i+1, line)
		if b.Len()+len(entry) > readMaxBytes && end >= start {
			full = true
			break
		}
		b.WriteString(entry)
		end = i + 1
	}
	switch {
	case end < total && full:
		fmt.Fprintf(&b, "\n(Output stopped at %d KiB: showing lines %d-%d of %d. Call read with offset=%d to continue.)", readMaxBytes>>10, start, end, total, end+1)
	case end < total:
		fmt.Fprintf(&b, "\n(Showing lines %d-%d of %d. Call read with offset=%d to continue.)", start, end, total, end+1)
	}
	if cutLines > 0 {
		fmt.Fprintf(&b, "\n(%d lines were longer than %d characters and were cut; use grep or bash to see them whole.)", cutLines, readMaxLineLen)
	}
	title := shown
	if start > 1 || end < total {
		title = fmt.Sprintf("%s:%d-%d", shown, start, end)
	}
	loc[0].Line = start
	return Result{
		Output:    strings.TrimSuffix(b.String(), "\n"),
		Title:     title,
		Locations: loc,
		Metadata:  metadata(map[string]any{"lines": total, "from": start, "to": end, "truncated": end < total || cutLines > 0}),
	}
}

func readDir(abs, shown string, in readInput) (Result, error) {
	entries, err := os.ReadDir(abs)
	if err != nil {
		return failure("unreadable", "Cannot list %s: %v", shown, err), nil
	}
	total := len(entries)
	start := max(in.Offset, 1)
	if total > 0 && start > total {
		return failure("offset past the end", "offset %d is past the end of %s, which has %d entries.", start, shown, total), nil
	}
	limit := in.Limit
	if limit <= 0 || limit > readMaxLines {
		limit = readMaxLines
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is a directory with %d entries:\n", shown, total)
	end := start - 1
	for i := start - 1; i < total && i < start-1+limit; i++ {
		e := entries[i]
		name := e.Name()
		switch {
		case e.IsDir():
			name += "/"
		case e.Type()&fs.ModeSymlink != 0:
			name += "@"
		}
		b.WriteString(name + "\n")
		end = i + 1
	}
	if end < total {
		fmt.Fprintf(&b, "(Showing entries %d-%d of %d. Call read with offset=%d to continue.)\n", start, end, total, end+1)
	}
	return Result{
		Output:    strings.TrimSuffix(b.String(), "\n"),
		Title:     shown + "/",
		Locations: []agent.Location{{Path: abs}},
		Metadata:  metadata(map[string]any{"entries": total}),
	}, nil
}
