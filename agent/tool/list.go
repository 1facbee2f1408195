package tool

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool/internal/search"
)

//go:embed list.md
var listDescription string

const listMax = 200

type listInput struct {
	Path   string   `json:"path,omitempty" jsonschema:"the directory to list, absolute or relative to the workspace root (default: the root)"`
	Ignore []string `json:"ignore,omitempty" jsonschema:"more glob patterns of files or directories to leave out"`
}

// newList returns the list tool, its files from the Go walk (see glob).
func newList() Tool {
	return newTyped(Info{
		Name:        "list",
		Description: listDescription,
		Kind:        agent.ToolKindSearch,
		ReadOnly:    true,
		Timeout:     60 * time.Second,
	}, nil, func(ctx context.Context, env *Env, in listInput) (Result, error) {
		var ignore []*search.Wildcard
		for _, p := range in.Ignore {
			w, err := compileInclude(strings.TrimSuffix(p, "/"))
			if err != nil {
				return failure("invalid pattern", "The ignore pattern %q is not a valid glob: %v.", p, err), nil
			}
			ignore = append(ignore, w)
		}
		root, dir, res, err := searchDir(ctx, env, in.Path, permission.List, "List "+cmp.Or(in.Path, "."), false)
		if res != nil || err != nil {
			return deref(res), err
		}
		all, err := search.Go{}.Files(ctx, root, dir)
		if err != nil {
			return searchFailed(ctx, err)
		}
		type entry struct {
			rel   string
			depth int
		}
		var found []entry
		for _, abs := range all {
			rel := relUnder(dir, abs)
			if !ignoredByAny(ignore, rel) {
				found = append(found, entry{rel, strings.Count(rel, "/")})
			}
		}
		// Shallow files first, so a big tree shows its top levels: only
		// the depths that fill the first listMax need sorting.
		total := len(found)
		found = shallowest(found, listMax, func(e entry) int { return e.depth })
		slices.SortFunc(found, func(a, b entry) int {
			if c := a.depth - b.depth; c != 0 {
				return c
			}
			return strings.Compare(a.rel, b.rel)
		})
		shown := make([]string, min(len(found), listMax))
		for i := range shown {
			shown[i] = found[i].rel
		}
		var b strings.Builder
		b.WriteString(displayPath(root, dir) + "/\n")
		renderTree(&b, shown)
		switch {
		case total == 0:
			b.WriteString("(no files)")
		case total > len(shown):
			fmt.Fprintf(&b, "(Showing %d of %d files, the shallowest first. List a subdirectory, or use glob, to see the rest.)", len(shown), total)
		}
		return Result{
			Output:   strings.TrimSuffix(b.String(), "\n"),
			Title:    displayPath(root, dir) + "/",
			Metadata: metadata(map[string]any{"files": total, "shown": len(shown), "engine": search.Go{}.Name()}),
		}, nil
	})
}

// shallowest keeps the items at the smallest depths that hold at least n
// of them (all of the last such depth), in their order.
func shallowest[T any](items []T, n int, depth func(T) int) []T {
	if len(items) <= n {
		return items
	}
	var count []int
	for _, it := range items {
		d := depth(it)
		if d >= len(count) {
			count = append(count, make([]int, d+1-len(count))...)
		}
		count[d]++
	}
	limit, sum := 0, 0
	for d, c := range count {
		sum += c
		if limit = d; sum >= n {
			break
		}
	}
	kept := items[:0]
	for _, it := range items {
		if depth(it) <= limit {
			kept = append(kept, it)
		}
	}
	return kept
}

// ignoredByAny reports whether a pattern matches the path or one of the
// directories it lies in.
func ignoredByAny(patterns []*search.Wildcard, rel string) bool {
	for _, w := range patterns {
		for p := rel; ; {
			if w.Match(p) {
				return true
			}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	return false
}

// renderTree writes slash-separated paths as an indented tree: in each
// directory, subdirectories first, then files, by name.
func renderTree(b *strings.Builder, paths []string) {
	type node struct {
		dirs  map[string]*node
		files []string
	}
	top := &node{dirs: map[string]*node{}}
	for _, p := range paths {
		n := top
		parts := strings.Split(p, "/")
		for _, d := range parts[:len(parts)-1] {
			c, ok := n.dirs[d]
			if !ok {
				c = &node{dirs: map[string]*node{}}
				n.dirs[d] = c
			}
			n = c
		}
		n.files = append(n.files, parts[len(parts)-1])
	}
	var walk func(n *node, indent string)
	walk = func(n *node, indent string) {
		for _, d := range slices.Sorted(maps.Keys(n.dirs)) {
			b.WriteString(indent + d + "/\n")
			walk(n.dirs[d], indent+"  ")
		}
		slices.Sort(n.files)
		for _, f := range n.files {
			b.WriteString(indent + f + "\n")
		}
	}
	walk(top, "  ")
}
