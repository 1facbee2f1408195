package doctor

import (
	"fmt"
	"strings"

	"github.com/darman-dev/darman/agent/agents"
	"github.com/darman-dev/darman/agent/prompt"
)

// Agents lists the agents of cat with the file each comes from, and the
// files left out.
func Agents(r *Report, cat *agents.Catalog, root string) {
	d := prompt.LocateDirs(root, nil)
	for _, a := range cat.List() {
		where := a.Source
		if a.Path != "" {
			where = prompt.ShortPath(d.Root, d.Home, a.Path)
		}
		detail := fmt.Sprintf("%s, %s", a.Mode, where)
		if len(a.Shadowed) > 0 {
			var hidden []string
			for _, p := range a.Shadowed {
				hidden = append(hidden, prompt.ShortPath(d.Root, d.Home, p))
			}
			detail += "; hides " + strings.Join(hidden, ", ")
		}
		r.Add("agents", a.Name, "ok", detail)
	}
	for _, p := range cat.Problems() {
		r.Add("agents", prompt.ShortPath(d.Root, d.Home, p.Path), "warn", p.Err.Error()+" (the agent is left out)")
	}
}
