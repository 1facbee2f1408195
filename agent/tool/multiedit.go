package tool

import (
	"context"
	_ "embed"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/darman-dev/darman/agent"
)

//go:embed multiedit.md
var multieditDescription string

type multiEdit struct {
	OldString  string `json:"oldString" jsonschema:"the text to replace, as the file holds it after the edits before this one; empty only in a first edit that creates the file"`
	NewString  string `json:"newString" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replaceAll,omitempty" jsonschema:"replace every occurrence (default false)"`
}

type multieditInput struct {
	Path  string      `json:"path" jsonschema:"the file to change, absolute or relative to the workspace root"`
	Edits []multiEdit `json:"edits" jsonschema:"the edits, applied in order; all or none"`
}

// newMultiedit returns the multiedit tool.
func newMultiedit() Tool {
	return newTyped(Info{
		Name:        "multiedit",
		Description: multieditDescription,
		Kind:        agent.ToolKindEdit,
		Timeout:     30 * time.Second,
	}, func(s *jsonschema.Schema) {
		one := 1
		s.Properties["edits"].MinItems = &one
	}, func(ctx context.Context, env *Env, in multieditInput) (Result, error) {
		edits := make([]editInput, len(in.Edits))
		for i, e := range in.Edits {
			edits[i] = editInput{Path: in.Path, OldString: e.OldString, NewString: e.NewString, ReplaceAll: e.ReplaceAll}
		}
		return runEdits(ctx, env, in.Path, edits, "multiedit")
	})
}
