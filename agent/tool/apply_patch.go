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

//go:embed apply_patch.md
var applyPatchDescription string

type applyPatchInput struct {
	Input string `json:"input" jsonschema:"the whole patch, from *** Begin Patch to *** End Patch"`
}

// newApplyPatch returns the apply_patch tool.
func newApplyPatch() Tool {
	return newTyped(Info{
		Name:        "apply_patch",
		Description: applyPatchDescription,
		Kind:        agent.ToolKindEdit,
		Timeout:     30 * time.Second,
	}, nil, runApplyPatch)
}

func runApplyPatch(ctx context.Context, env *Env, in applyPatchInput) (Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return Result{}, err
	}
	ops, err := textmatch.ParsePatch(in.Input)
	if err != nil {
		return failure("invalid patch", "The patch is not valid: %v. Nothing was changed.", err), nil
	}
	root := ws.Root()

	// Resolve every path first, and refuse a patch that touches a file twice.
	type target struct {
		op       textmatch.PatchOp
		abs, dst string // dst: where an update moves to, else abs
	}
	targets := make([]target, len(ops))
	var all []string
	seen := map[string]bool{}
	for i, op := range ops {
		abs, err := resolvePath(ws, op.Path)
		if err != nil {
			return failure("invalid path", "%v. Nothing was changed.", err), nil
		}
		t := target{op: op, abs: abs, dst: abs}
		if op.MoveTo != "" {
			if t.dst, err = resolvePath(ws, op.MoveTo); err != nil {
				return failure("invalid path", "%v. Nothing was changed.", err), nil
			}
		}
		paths := []string{t.abs}
		if t.dst != t.abs {
			paths = append(paths, t.dst)
		}
		for _, p := range paths {
			if seen[p] {
				return failure("invalid patch", "The patch changes %s more than once; merge those changes into one operation. Nothing was changed.", displayPath(root, p)), nil
			}
			seen[p] = true
		}
		all = append(all, paths...)
		targets[i] = t
	}
	title := "Patch " + strings.Join(shortList(root, all), ", ")
	denied, asked, ok, err := permitOutside(ctx, env, root, title, all...)
	if !ok {
		return denied, err
	}

	// Work out every file's new content before touching any.
	var changes []fileChange
	var summary []string
	for _, t := range targets {
		shown := displayPath(root, t.abs)
		c, bad, err := loadFile(ctx, ws, t.abs, shown)
		if err != nil {
			return Result{}, err
		}
		if bad != nil {
			bad.Output += " Nothing was changed."
			return *bad, nil
		}
		switch t.op.Kind {
		case textmatch.OpAdd:
			if c.exists && env.Files != nil {
				if err := env.Files.Check(t.abs, c.before); err != nil {
					return failure("file exists", "Cannot add %s: %v; or use *** Update File to change it. Nothing was changed.", shown, err), nil
				}
			}
			text := strings.Join(t.op.Lines, "\n")
			if len(t.op.Lines) > 0 {
				text += "\n"
			}
			c.after = []byte(text)
			summary = append(summary, "A "+shown)
		case textmatch.OpDelete:
			if !c.exists {
				return failure("not found", "Cannot delete %s: it does not exist. Nothing was changed.", shown), nil
			}
			c.remove = true
			summary = append(summary, "D "+shown)
		case textmatch.OpUpdate:
			if !c.exists {
				return failure("not found", "Cannot update %s: it does not exist (use *** Add File to create it). Nothing was changed.", shown), nil
			}
			text, form := decodeText(c.before)
			updated, err := textmatch.ApplyChunks(text, t.op.Chunks)
			if err != nil {
				return failure("patch does not apply", "The update of %s does not apply: %v\nRead the file and write the patch from what it holds now. Nothing was changed.", shown, err), nil
			}
			c.after = form.encode(updated)
			if t.dst == t.abs {
				summary = append(summary, "M "+shown)
				break
			}
			// A move: the new file gets the content, the old one goes.
			dstShown := displayPath(root, t.dst)
			d, bad, err := loadFile(ctx, ws, t.dst, dstShown)
			if err != nil {
				return Result{}, err
			}
			if bad != nil || d.exists {
				return failure("destination exists", "Cannot move %s to %s: the destination already exists. Nothing was changed.", shown, dstShown), nil
			}
			d.after = c.after
			changes = append(changes, d)
			c.after, c.remove = nil, true
			summary = append(summary, "R "+shown+" → "+dstShown)
		}
		changes = append(changes, c)
	}

	if !asked {
		if denied, ok, err := permitEdit(ctx, env, title, changes...); !ok {
			return denied, err
		}
	}
	for i, c := range changes {
		res, err := save(ctx, env, ws, c)
		if res == nil && err == nil {
			continue
		}
		// Undo what was written, so the patch applies all or nothing.
		rollback(ctx, env, ws, changes[:i])
		if err != nil {
			return Result{}, err
		}
		res.Output += " The files already changed by this patch were restored."
		return *res, nil
	}

	var locs []agent.Location
	diffs := make([]agent.Diff, len(changes))
	for i, c := range changes {
		locs = append(locs, agent.Location{Path: c.abs})
		diffs[i] = *c.diff()
	}
	res := Result{
		Output:    "Applied the patch:\n" + strings.Join(summary, "\n") + unsavedNote(ws, changes...),
		Title:     title,
		Locations: locs,
		Metadata:  metadata(map[string]any{"diffs": diffs}),
	}
	if len(changes) == 1 {
		res.Diff = changes[0].diff()
	}
	return res, nil
}

// rollback restores files a failed patch already changed.
func rollback(ctx context.Context, env *Env, ws Workspace, done []fileChange) {
	ctx = context.WithoutCancel(ctx)
	for i := len(done) - 1; i >= 0; i-- {
		c := done[i]
		undo := fileChange{abs: c.abs, shown: c.shown, before: c.after, after: c.before}
		if !c.exists {
			undo.remove = true
		}
		if res, err := save(ctx, env, ws, undo); res != nil || err != nil {
			if env.Logger != nil {
				env.Logger.Warn("apply_patch: could not restore a file", "path", c.abs, "error", err)
			}
		}
	}
}

// shortList shows at most three paths, then how many more.
func shortList(root string, paths []string) []string {
	var out []string
	for i, p := range paths {
		if i == 3 {
			out = append(out, fmt.Sprintf("%d more", len(paths)-3))
			break
		}
		out = append(out, displayPath(root, p))
	}
	return out
}
