package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/darman-dev/darman/agent/permission"
)

// workspace returns env's workspace, or the error that ends a call made
// without one.
func workspace(env *Env) (Workspace, error) {
	if env.Workspace == nil {
		return nil, errors.New("tool: no workspace (Env.Workspace is nil)")
	}
	return env.Workspace, nil
}

// resolvePath makes the model's path absolute and clean, taking a relative
// one from the workspace root. It says what is wrong with an empty path.
func resolvePath(ws Workspace, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("the path is empty: give a file path, absolute or relative to the workspace root")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("the path %q contains a NUL byte", p)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws.Root(), p)
	}
	return filepath.Clean(p), nil
}

// displayPath shows an absolute path the short way: relative to the root
// when it lies under it, as it is otherwise.
func displayPath(root, abs string) string {
	if abs == root {
		return "."
	}
	if rel, ok := strings.CutPrefix(abs, root+string(filepath.Separator)); ok {
		return filepath.ToSlash(rel)
	}
	if root == string(filepath.Separator) {
		return strings.TrimPrefix(abs, root)
	}
	return abs
}

// permit asks env.Permit about call. A refusal comes back as the call's
// result (ok false, err nil); err is set only when asking itself failed.
func permit(ctx context.Context, env *Env, call permission.Call) (denied Result, ok bool, err error) {
	if env.Permit == nil {
		return Result{}, false, errors.New("tool: no permission checker (Env.Permit is nil)")
	}
	if err := env.Permit(ctx, call); err != nil {
		if res, isDenied := Denied(err); isDenied {
			return res, false, nil
		}
		return Result{}, false, fmt.Errorf("ask for the %s permission: %w", call.Permission, err)
	}
	return Result{}, true, nil
}

// failure is an error result: a failure the model should see and handle.
func failure(title, format string, args ...any) Result {
	return Result{Output: fmt.Sprintf(format, args...), IsError: true, Title: title}
}

// similarNames suggests entries of dir whose names look like base, for a
// "did you mean" after a path that does not exist.
func similarNames(dir, base string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	want := strings.ToLower(strings.TrimSuffix(base, filepath.Ext(base)))
	var out []string
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		stem := strings.TrimSuffix(name, filepath.Ext(name))
		if want != "" && (stem == want || strings.Contains(name, want) || (len(stem) > 2 && strings.Contains(want, stem))) ||
			strings.EqualFold(e.Name(), base) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
		if len(out) == 5 {
			break
		}
	}
	slices.Sort(out)
	return out
}

// notFound is the result for a path that does not exist, with suggestions.
func notFound(root, abs string) Result {
	msg := fmt.Sprintf("%s does not exist.", displayPath(root, abs))
	if s := similarNames(filepath.Dir(abs), filepath.Base(abs)); len(s) > 0 {
		for i := range s {
			s[i] = displayPath(root, s[i])
		}
		msg += " Did you mean: " + strings.Join(s, ", ") + "?"
	} else {
		msg += " Check the path with glob or list."
	}
	return failure("not found", "%s", msg)
}
