package tool

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp/syntax"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool/internal/search"
)

//go:embed grep.md
var grepDescription string

const grepMax = 100

type grepInput struct {
	Pattern string `json:"pattern" jsonschema:"the regular expression to search for, in RE2 syntax"`
	Path    string `json:"path,omitempty" jsonschema:"the file or directory to search, absolute or relative to the workspace root (default: the root)"`
	Include string `json:"include,omitempty" jsonschema:"search only files matching this glob, e.g. *.go or *.{ts,tsx}"`
}

// newGrep returns the grep tool, searching with s.
func newGrep(s search.Searcher) Tool {
	return newTyped(Info{
		Name:        "grep",
		Description: grepDescription,
		Kind:        agent.ToolKindSearch,
		ReadOnly:    true,
		Timeout:     2 * time.Minute,
	}, nil, func(ctx context.Context, env *Env, in grepInput) (Result, error) {
		return runGrep(ctx, env, in, s)
	})
}

func runGrep(ctx context.Context, env *Env, in grepInput, s search.Searcher) (Result, error) {
	if _, err := syntax.Parse(in.Pattern, syntax.Perl); err != nil {
		return failure("invalid pattern", "The pattern is not a valid regular expression (RE2 syntax): %v.", err), nil
	}
	q := &search.Query{Pattern: in.Pattern, Lines: grepMax, IncludeRaw: strings.TrimSpace(in.Include)}
	if q.IncludeRaw != "" {
		w, err := compileInclude(q.IncludeRaw)
		if err != nil {
			return failure("invalid include", "include is not a valid glob: %v.", err), nil
		}
		q.Include = w
	}
	root, dir, res, err := searchDir(ctx, env, in.Path, permission.Grep, "Search for "+in.Pattern, true)
	if res != nil || err != nil {
		return deref(res), err
	}
	if info, err := os.Stat(dir); err == nil && !info.IsDir() && q.Include != nil {
		// A file named on its own: include decides whether to search it.
		if !q.Includes(filepath.Dir(dir), dir) {
			return Result{Output: "No matches.", Title: in.Pattern, Metadata: metadata(map[string]any{"matches": 0, "files": 0, "shown": 0, "engine": s.Name()})}, nil
		}
		q.Include, q.IncludeRaw = nil, ""
	}
	engine := s.Name()
	hits, err := s.Grep(ctx, root, dir, q)
	if err != nil && ctx.Err() == nil && engine != "go" {
		// ripgrep refused what Go accepts (a size limit, say): search
		// the Go way, which gives the same results.
		if env.Logger != nil {
			env.Logger.Debug("grep: rg failed, searching in Go", "error", err)
		}
		engine = "go"
		hits, err = search.Go{}.Grep(ctx, root, dir, q)
	}
	if err != nil {
		return searchFailed(ctx, err)
	}
	search.SortHits(hits)
	total := 0
	for _, h := range hits {
		total += h.Count
	}
	var b strings.Builder
	shown := 0
	for _, h := range hits {
		if shown == grepMax {
			break
		}
		p := displayPath(root, h.Abs)
		for _, l := range h.Lines {
			if shown == grepMax {
				break
			}
			fmt.Fprintf(&b, "%s:%d: %s\n", p, l.No, cutHitLine(l.Text))
			shown++
		}
	}
	head := fmt.Sprintf("Found %d matching lines in %d files.\n", total, len(hits))
	switch {
	case total == 0:
		head = "No matches."
	case total > shown:
		head = fmt.Sprintf("Found %d matching lines in %d files; showing %d, from the newest files first. Narrow the pattern, path or include to see the rest.\n", total, len(hits), shown)
	}
	return Result{
		Output:   strings.TrimSuffix(head+b.String(), "\n"),
		Title:    in.Pattern,
		Metadata: metadata(map[string]any{"matches": total, "files": len(hits), "shown": shown, "engine": engine}),
	}, nil
}

// cutHitLine shows a matching line: without its CR, and cut when long.
func cutHitLine(s string) string {
	s = strings.TrimSuffix(s, "\r")
	if len(s) <= search.HitLineMax {
		return s
	}
	n := search.HitLineMax
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + " …"
}
