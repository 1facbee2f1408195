package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool/internal/textmatch"
	"github.com/darman-dev/darman/internal/fsafe"
)

// fileChange is one file an editing tool changes: what it held, what it
// will hold. before is nil for a file that does not exist yet; a delete
// has after nil.
type fileChange struct {
	abs, shown string
	exists     bool
	before     []byte
	after      []byte
	remove     bool
}

func (c fileChange) diff() *agent.Diff {
	return &agent.Diff{Path: c.abs, OldText: string(c.before), NewText: string(c.after)}
}

// loadFile reads a file an editing tool is about to change. A missing file
// is no failure (exists is false); a directory or a binary file is, given
// as the result for the model.
func loadFile(ctx context.Context, ws Workspace, abs, shown string) (fileChange, *Result, error) {
	c := fileChange{abs: abs, shown: shown}
	if info, err := os.Stat(abs); err == nil && !info.Mode().IsRegular() {
		r := failure("not a file", "%s is not a regular file; only files can be edited.", shown)
		return c, &r, nil
	}
	content, err := ws.ReadFile(ctx, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil, nil
	case err != nil && ctx.Err() != nil:
		return c, nil, ctx.Err()
	case err != nil:
		r := failure("unreadable", "Cannot read %s: %v", shown, err)
		return c, &r, nil
	case isBinary(abs, content):
		r := failure("binary file", "%s is a binary file; it cannot be edited as text.", shown)
		return c, &r, nil
	}
	c.exists, c.before = true, content
	return c, nil, nil
}

// permitEdit asks for the edit permission on every changed file at once,
// passing the diffs for the person to look at.
func permitEdit(ctx context.Context, env *Env, title string, changes ...fileChange) (Result, bool, error) {
	subjects := make([]string, len(changes))
	diffs := make([]agent.Diff, len(changes))
	for i, c := range changes {
		subjects[i] = c.abs
		diffs[i] = *c.diff()
	}
	return permit(ctx, env, permission.Call{Permission: permission.Edit, Subjects: subjects, Title: title, Diffs: diffs})
}

// permitOutside asks for the edit permission up front for the paths that
// lie outside the workspace, before anything of them is read, so that a
// failed edit cannot show the model a file it may not touch. It returns
// whether it asked for all of them.
func permitOutside(ctx context.Context, env *Env, root, title string, abs ...string) (res Result, asked, ok bool, err error) {
	var outside []string
	for _, p := range abs {
		if out, oerr := permission.Outside(root, p); oerr != nil || out {
			outside = append(outside, p)
		}
	}
	if len(outside) == 0 {
		return Result{}, false, true, nil
	}
	res, ok, err = permit(ctx, env, permission.Call{Permission: permission.Edit, Subjects: outside, Title: title})
	return res, len(outside) == len(abs), ok, err
}

// save writes a change through the workspace and records the new content
// as seen by the model. A failure the model should hear of comes back as
// the result.
func save(ctx context.Context, env *Env, ws Workspace, c fileChange) (*Result, error) {
	// Right before writing: a path inside the workspace whose real
	// location is not (a link, maybe swapped in since the permission was
	// asked) is refused.
	if root := ws.Root(); fsafe.Within(root, c.abs) {
		check := c.abs
		if c.remove {
			check = filepath.Dir(c.abs) // removing a link removes the link
		}
		var out *fsafe.OutsideError
		if _, err := fsafe.Check(root, check); errors.As(err, &out) {
			r := failure("outside the workspace", "%s was not changed: it leads to %s, outside the workspace, through a symbolic link. Work on files inside the workspace.", c.shown, out.Real)
			return &r, nil
		}
	}
	var err error
	if c.remove {
		if rm, ok := ws.(Remover); ok {
			err = rm.Remove(ctx, c.abs)
		} else {
			err = os.Remove(c.abs)
		}
	} else {
		err = ws.WriteFile(ctx, c.abs, c.after)
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrUnsaved):
		r := failure("unsaved in the editor", "%s has unsaved changes in the editor, so it was not changed. Ask the user to save or discard them, then read the file again and redo the change.", c.shown)
		return &r, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	default:
		r := failure("write failed", "Could not write %s: %v", c.shown, err)
		return &r, nil
	}
	if env.Files != nil && !c.remove {
		env.Files.Record(c.abs, c.after)
	}
	return nil, nil
}

// unsavedNote is what the model is told when changed files are in the
// editor's buffers, not saved yet (see Buffers), and "" otherwise.
func unsavedNote(ws Workspace, changes ...fileChange) string {
	b, ok := ws.(Buffers)
	if !ok {
		return ""
	}
	var shown []string
	for _, c := range changes {
		if !c.remove && b.InBuffer(c.abs) {
			shown = append(shown, c.shown)
		}
	}
	if len(shown) == 0 {
		return ""
	}
	return fmt.Sprintf(" The change to %s is in the editor's buffer, not saved: the user sees it there and saves it; commands and other programs read the old file until then.", strings.Join(shown, ", "))
}

// changedSnippet shows the lines around the first replacement of an edit,
// numbered, so the model sees the result without reading the file again.
func changedSnippet(text string, a textmatch.Applied) (string, int) {
	from, to := textmatch.ChangedLines(text, a)
	const most = 40
	snippetTo := min(to+2, from+most)
	s := numberedLines(text, from-2, snippetTo)
	if to+2 > snippetTo {
		s += fmt.Sprintf("(… %d more changed lines)\n", to+2-snippetTo)
	}
	return strings.TrimSuffix(s, "\n"), from
}

// matchFailure explains a failed match: for an ambiguous one, where it
// matched; for a missing one, the region most like oldString, if the
// model may read the file.
func matchFailure(ctx context.Context, env *Env, c fileChange, text, old string, err error, prefix string) (Result, error) {
	var amb textmatch.ErrAmbiguous
	if errors.As(err, &amb) {
		return failure("ambiguous", "%s%s in %s. No change was made.", prefix, amb.Error(), c.shown), nil
	}
	msg := fmt.Sprintf("%soldString was not found in %s. No change was made.", prefix, c.shown)
	from, to, found := textmatch.ClosestRegion(text, old)
	if !found {
		return failure("no match", "%s Read the file to see what it holds now, then retry with text copied from it.", msg), nil
	}
	// Showing the file is reading it: ask as read would.
	if _, ok, err := permit(ctx, env, permission.Call{Permission: permission.Read, Subjects: []string{c.abs}, Title: "Read " + c.shown}); !ok {
		if err != nil {
			return Result{}, err
		}
		return failure("no match", "%s Check the file's content and retry with text copied from it.", msg), nil
	}
	region := numberedLines(text, from-2, to+2)
	return failure("no match", "%s The part of the file most like it is:\n%s\nRetry with oldString copied from the file as it is (without the line numbers).",
		msg, strings.TrimSuffix(region, "\n")), nil
}

// numberedLines renders lines [from, to] of text (0-based) with their
// 1-based numbers, as read shows them.
func numberedLines(text string, from, to int) string {
	lines := strings.Split(text, "\n")
	if len(text) > 0 && strings.HasSuffix(text, "\n") {
		lines = lines[:len(lines)-1]
	}
	to = min(to, len(lines)-1)
	var b strings.Builder
	for i := max(0, from); i <= to; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, truncateLine(strings.TrimSuffix(lines[i], "\r"), readMaxLineLen))
	}
	return b.String()
}
