package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
)

//go:embed diagnostics.md
var diagnosticsDescription string

// Diagnostics is what the workspace's language servers say about its files
// (the diagnostics package's pool implements it). Both methods are safe for
// concurrent use and return promptly when ctx is done. After an edit
// (Check) a language server that fails is silent: it is the editor's and
// doctor's business, not the model's. Asked (Problems), it is an error
// the model reads, never an empty list.
type Diagnostics interface {
	// Check tells the servers that paths changed, waits for their
	// diagnostics, and returns the errors formatted for the model ("" when
	// there are none, or no server serves these files) and every item, all
	// severities, as JSON for the tool call's metadata.
	Check(ctx context.Context, paths ...string) (output string, metadata json.RawMessage)
	// Problems returns every diagnostic of one file, all severities,
	// formatted for the model ("" when there are none), and the same as
	// JSON. The error says why they cannot be known: no server, or one
	// that cannot load the workspace, in its own words.
	Problems(ctx context.Context, path string) (output string, metadata json.RawMessage, err error)
}

type diagnosticsInput struct {
	Path string `json:"path" jsonschema:"the file to check, absolute or relative to the workspace root"`
}

// newDiagnostics returns the diagnostics tool.
func newDiagnostics(d Diagnostics) Tool {
	return newTyped(Info{
		Name:        "diagnostics",
		Description: diagnosticsDescription,
		Kind:        agent.ToolKindRead,
		ReadOnly:    true,
		Timeout:     30 * time.Second,
	}, nil, func(ctx context.Context, env *Env, in diagnosticsInput) (Result, error) {
		ws, err := workspace(env)
		if err != nil {
			return Result{}, err
		}
		abs, err := resolvePath(ws, in.Path)
		if err != nil {
			return failure("invalid path", "%v", err), nil
		}
		shown := displayPath(ws.Root(), abs)
		if denied, ok, err := permit(ctx, env, permission.Call{Permission: permission.Read, Subjects: []string{abs}, Title: "Check " + shown}); !ok {
			return denied, err
		}
		out, meta, err := d.Problems(ctx, abs)
		if err != nil {
			return failure("no diagnostics", "Cannot get diagnostics for %s, so nothing is known about its problems: %v", shown, err), nil
		}
		if out == "" {
			out = "No problems reported in " + shown + "."
		}
		return Result{Output: out, Title: shown, Locations: []agent.Location{{Path: abs}}, Metadata: meta}, nil
	})
}
