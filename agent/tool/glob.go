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

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool/internal/search"
)

//go:embed glob.md
var globDescription string

const globMax = 100

type globInput struct {
	Pattern string `json:"pattern" jsonschema:"the glob to match, e.g. *.go or src/**/*.ts"`
	Path    string `json:"path,omitempty" jsonschema:"the directory to search, absolute or relative to the workspace root (default: the root)"`
}

// newGlob returns the glob tool.
func newGlob() Tool {
	return newTyped(Info{
		Name:        "glob",
		Description: globDescription,
		Kind:        agent.ToolKindSearch,
		ReadOnly:    true,
		Timeout:     60 * time.Second,
	}, nil, func(ctx context.Context, env *Env, in globInput) (Result, error) {
		w, err := compileInclude(in.Pattern)
		if err != nil {
			return failure("invalid pattern", "The pattern is not a valid glob: %v.", err), nil
		}
		root, dir, res, err := searchDir(ctx, env, in.Path, permission.Glob, "Find "+in.Pattern, false)
		if res != nil || err != nil {
			return deref(res), err
		}
		// The Go walk, whichever engine grep uses: it stats each match
		// from its open directory as it finds it, where ripgrep's list
		// would need a stat of every path again for the order, and it has
		// no second process or output to parse (docs/benchmarks.md).
		found, err := search.Go{}.FilesStamped(ctx, root, dir, func(abs string) bool {
			return w.Match(relUnder(dir, abs))
		})
		if err != nil {
			return searchFailed(ctx, err)
		}
		total := len(found)
		shown := search.Newest(found, globMax)
		var b strings.Builder
		for _, f := range shown {
			b.WriteString(displayPath(root, f.Abs) + "\n")
		}
		switch {
		case total == 0:
			b.WriteString("No files match.")
		case total > len(shown):
			fmt.Fprintf(&b, "(Showing %d of %d files, newest first. Narrow the pattern or the path to see the rest.)", len(shown), total)
		}
		return Result{
			Output:   strings.TrimSuffix(b.String(), "\n"),
			Title:    in.Pattern,
			Metadata: metadata(map[string]any{"files": total, "shown": len(shown), "engine": search.Go{}.Name()}),
		}, nil
	})
}

// compileInclude compiles a glob that, without a "/", matches file names
// at any depth, and with one, paths from the searched directory.
func compileInclude(pattern string) (*search.Wildcard, error) {
	p := strings.TrimSpace(pattern)
	if p == "" {
		return nil, errors.New("it is empty")
	}
	p = strings.TrimPrefix(strings.TrimPrefix(p, "./"), "/")
	if !strings.Contains(p, "/") && !strings.HasPrefix(p, "**") {
		p = "**/" + p
	}
	return search.CompileWildcard(p)
}

// relUnder returns abs relative to dir, slash-separated.
func relUnder(dir, abs string) string {
	if r, ok := strings.CutPrefix(abs, dir+string(filepath.Separator)); ok {
		return filepath.ToSlash(r)
	}
	return filepath.Base(abs)
}

// searchDir resolves the directory (or, with fileOK, file) a search tool
// looks in and asks for its permission.
func searchDir(ctx context.Context, env *Env, path, perm, title string, fileOK bool) (root, dir string, res *Result, err error) {
	ws, err := workspace(env)
	if err != nil {
		return "", "", nil, err
	}
	root = ws.Root()
	dir = root
	if path != "" {
		if dir, err = resolvePath(ws, path); err != nil {
			r := failure("invalid path", "%v", err)
			return "", "", &r, nil
		}
	}
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r := notFound(root, dir)
		return "", "", &r, nil
	case err != nil:
		r := failure("unreadable", "Cannot search %s: %v", displayPath(root, dir), err)
		return "", "", &r, nil
	case !info.IsDir() && !fileOK:
		r := failure("not a directory", "%s is a file, not a directory to search.", displayPath(root, dir))
		return "", "", &r, nil
	}
	denied, ok, err := permit(ctx, env, permission.Call{Permission: perm, Subjects: []string{dir}, Title: title})
	if !ok {
		return "", "", &denied, err
	}
	return root, dir, nil, nil
}

// searchFailed turns a search.Searcher's error into the call's outcome.
func searchFailed(ctx context.Context, err error) (Result, error) {
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	return failure("search failed", "The search failed: %v", err), nil
}
