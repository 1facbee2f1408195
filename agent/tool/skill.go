package tool

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
)

//go:embed skill.md
var skillDescription string

// Skills are the skills the skill tool can load. The package that finds
// skills on disk implements it; its methods must be safe for concurrent
// use.
type Skills interface {
	// Skill returns the body of the named skill and the directory its
	// files are relative to; ok is false when there is no such skill.
	Skill(name string) (body string, dir string, ok bool)
	// Names returns the names of every skill available.
	Names() []string
}

type skillInput struct {
	Name string `json:"name" jsonschema:"the name of the skill, as listed in your instructions"`
}

// newSkill returns the skill tool, loading from skills.
func newSkill(skills Skills) Tool {
	return newTyped(Info{
		Name:        "skill",
		Description: skillDescription,
		Kind:        agent.ToolKindRead,
		ReadOnly:    true,
		Timeout:     10 * time.Second,
	}, nil, func(ctx context.Context, env *Env, in skillInput) (Result, error) {
		name := strings.TrimSpace(in.Name)
		body, dir, ok := skills.Skill(name)
		if !ok {
			names := slices.Sorted(slices.Values(skills.Names()))
			if len(names) == 0 {
				return failure("no such skill", "There is no skill named %q, and no skills are available.", name), nil
			}
			return failure("no such skill", "There is no skill named %q. The skills are: %s.", name, strings.Join(names, ", ")), nil
		}
		if denied, ok, err := permit(ctx, env, permission.Call{Permission: "skill", Subjects: []string{name}, Title: "Load the skill " + name}); !ok {
			return denied, err
		}
		out := fmt.Sprintf("<skill name=%q directory=%q>\n%s\n</skill>\nPaths in this skill are relative to %s.", name, dir, strings.TrimSpace(body), dir)
		return Result{Output: out, Title: name, Metadata: metadata(map[string]any{"name": name, "directory": dir})}, nil
	})
}
