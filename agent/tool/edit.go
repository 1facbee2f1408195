package tool

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/tool/internal/textmatch"
)

//go:embed edit.md
var editDescription string

type editInput struct {
	Path       string `json:"path" jsonschema:"the file to change, absolute or relative to the workspace root"`
	OldString  string `json:"oldString" jsonschema:"the text to replace, copied exactly from the file; empty to create a new file"`
	NewString  string `json:"newString" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replaceAll,omitempty" jsonschema:"replace every occurrence of oldString, not just one (default false)"`
}

// newEdit returns the edit tool.
func newEdit() Tool {
	return newTyped(Info{
		Name:        "edit",
		Description: editDescription,
		Kind:        agent.ToolKindEdit,
		Timeout:     30 * time.Second,
	}, nil, func(ctx context.Context, env *Env, in editInput) (Result, error) {
		return runEdits(ctx, env, in.Path, []editInput{in}, "edit")
	})
}

// runEdits applies edits, in order, to one file and writes it if they all
// apply. It serves edit and multiedit.
func runEdits(ctx context.Context, env *Env, path string, edits []editInput, tool string) (Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return Result{}, err
	}
	abs, err := resolvePath(ws, path)
	if err != nil {
		return failure("invalid path", "%v", err), nil
	}
	root := ws.Root()
	shown := displayPath(root, abs)
	title := "Edit " + shown
	denied, asked, ok, err := permitOutside(ctx, env, root, title, abs)
	if !ok {
		return denied, err
	}
	c, bad, err := loadFile(ctx, ws, abs, shown)
	if bad != nil || err != nil {
		return deref(bad), err
	}

	text, form := decodeText(c.before)
	var first textmatch.Applied
	var firstText string
	var tolerant []string
	replaced, created := 0, false
	for i, e := range edits {
		prefix := ""
		if len(edits) > 1 {
			prefix = fmt.Sprintf("Edit %d of %d: ", i+1, len(edits))
		}
		if e.OldString == e.NewString {
			return failure("no change", "%soldString and newString are the same, so there is nothing to change. No change was made.", prefix), nil
		}
		if e.OldString == "" {
			switch {
			case i > 0 || c.exists && len(c.before) > 0:
				what := "exists"
				if i > 0 {
					what = "was given content by an earlier edit"
				}
				return failure("file exists", "%s%s %s, and an empty oldString only creates a file. Give the text to replace as oldString, or replace the whole file with write. No change was made.", prefix, shown, what), nil
			}
			text = form.normalize(e.NewString)
			first = textmatch.Applied{Text: text, Count: 1, Inserted: text}
			firstText, replaced, created = text, 1, true
			continue
		}
		if !c.exists && !created {
			return notFound(root, abs), nil
		}
		a, err := textmatch.Apply(text, form.normalize(e.OldString), form.normalize(e.NewString), e.ReplaceAll)
		if err != nil {
			return matchFailure(ctx, env, c, text, form.normalize(e.OldString), err, prefix)
		}
		text = a.Text
		if a.How != "" {
			tolerant = append(tolerant, prefix+"oldString was not found exactly; it was matched "+a.How+".")
		}
		if i == 0 {
			first, firstText = a, a.Text
		}
		replaced += a.Count
	}
	c.after = form.encode(text)

	if !asked {
		if denied, ok, err := permitEdit(ctx, env, title, c); !ok {
			return denied, err
		}
	}
	if res, err := save(ctx, env, ws, c); res != nil || err != nil {
		return deref(res), err
	}

	snippet, line := changedSnippet(firstText, first)
	var out string
	switch {
	case !c.exists:
		out = fmt.Sprintf("Created %s.", shown)
	case len(edits) > 1:
		out = fmt.Sprintf("Edited %s: %d edits, %d replacements.", shown, len(edits), replaced)
	case first.Count > 1:
		out = fmt.Sprintf("Edited %s: replaced %d occurrences.", shown, first.Count)
	default:
		out = fmt.Sprintf("Edited %s.", shown)
	}
	for _, t := range tolerant {
		out += " " + t
	}
	out += unsavedNote(ws, c)
	if len(edits) > 1 {
		out += " After the first edit, these lines read:\n" + snippet
	} else {
		out += " These lines now read:\n" + snippet
	}
	return Result{
		Output:    out,
		Title:     title,
		Locations: []agent.Location{{Path: abs, Line: line + 1}},
		Diff:      c.diff(),
		Metadata:  metadata(map[string]any{"replacements": replaced, "tolerant": tolerant, "created": !c.exists}),
	}, nil
}

func deref(r *Result) Result {
	if r == nil {
		return Result{}
	}
	return *r
}
