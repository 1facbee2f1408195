package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/internal/sandbox"
)

// The protected names directly at the workspace root.
//
// The sandbox keeps the protected paths read-only, and a missing one in
// git's directory or below an existing folder cannot be made either; one
// missing directly at the root (.envrc, .husky/, .vscode/, .git/ in a
// folder that is not a repository) can: a mount cannot refuse one name in
// a directory whose other new files must stay possible. So the bash tool
// notes which of those names are absent before each command (sandboxed
// or not) and looks again after it: one made is asked about as a write to
// a protected path (protected_path), and when that is not allowed it is
// moved into the quarantine directory, never deleted.
//
// What a command started may outlive it and write later: a background
// job, or a process that left the command's session (setsid, nohup and a
// double fork). So the names absent before a command stay watched
// (RootGuard) for as long as anything it started may run, and are looked
// at again: at the start and end of every later bash, bash_output and
// bash_kill call (asked then, as above), when a background job ends or is
// killed (moved aside unasked: no call is there to ask in; the model hears
// at its next call), and when the workspace closes (RootGuard.Settle),
// once the sandbox has killed everything left in its PID namespaces
// (sandbox.Close): no confined writer is left then, so nothing made is
// missed. A root stops being watched once a look finds nothing of the
// sandbox's running (sandbox.Alive); where the sandbox cannot tell
// (unsandboxed commands), once the session has no background job running.

// RootGuard watches the protected names at a workspace's root for the
// bash tools of one workspace runtime (see above); they share it, so that
// a name one tool's command made late is seen by the next call of any.
// It is safe for concurrent use.
type RootGuard struct {
	quarantine string
	sb         *sandbox.Sandbox

	mu sync.Mutex
	// watched holds, per root, the names absent before a command that
	// may still have processes running.
	watched map[string]map[string]bool
	// told holds, per root, what a look outside any call moved aside, for
	// the model's next call there.
	told map[string][]string
}

// NewRootGuard returns the guard of a workspace runtime whose commands
// sb confines (nil: none). quarantine is the directory (in darman's data
// dir) a protected name made at the root is moved into when keeping it is
// not allowed; "" leaves it where it is, and the model is told.
func NewRootGuard(quarantine string, sb *sandbox.Sandbox) *RootGuard {
	return &RootGuard{quarantine: quarantine, sb: sb, watched: map[string]map[string]bool{}, told: map[string][]string{}}
}

// arm adds the protected names absent at root now to those watched.
func (g *RootGuard) arm(root string) {
	absent := absentRootNames(root)
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.watched[root]
	if w == nil {
		w = map[string]bool{}
		g.watched[root] = w
	}
	for _, n := range absent {
		w[n] = true
	}
}

// names returns the watched names of root.
func (g *RootGuard) names(root string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for n := range g.watched[root] {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// look looks at root's watched names in a call (env; nil: outside any,
// nothing is asked) and returns what the model is told, with what earlier
// looks outside a call moved aside. A name kept is watched no more; a
// name moved aside is absent again and stays watched. idle says whether
// the commands may have left nothing running (see disarm).
func (g *RootGuard) look(ctx context.Context, env *Env, root string, idle func() bool) (string, error) {
	names := g.names(root)
	var notes []string
	var err error
	if len(names) > 0 {
		var kept []string
		notes, kept, err = checkRoot(ctx, env, root, g.quarantine, names)
		g.mu.Lock()
		for _, n := range kept {
			delete(g.watched[root], n)
		}
		g.mu.Unlock()
		g.disarm(root, idle)
	}
	g.mu.Lock()
	told := g.told[root]
	if env != nil {
		delete(g.told, root)
	} else {
		g.told[root] = append(told, notes...)
		told = nil
	}
	g.mu.Unlock()
	return strings.Join(append(told, notes...), "\n"), err
}

// disarm stops watching root when nothing a command started can write
// any more: the sandbox counts no process left in its PID namespaces, or,
// where it cannot count (unsandboxed commands, whose escapees nothing can
// follow), idle says so.
func (g *RootGuard) disarm(root string, idle func() bool) {
	if n, ok := g.sb.Alive(); ok && n > 0 || !ok && (idle == nil || !idle()) {
		return
	}
	g.mu.Lock()
	delete(g.watched, root)
	g.mu.Unlock()
}

// Settle looks a last time, when the workspace closes: after its
// sessions' background jobs were stopped and the sandbox was closed (which
// kills what its commands left running), a watched name that exists is
// moved aside, unasked. It returns what it moved and where, for the log.
func (g *RootGuard) Settle() []string {
	g.mu.Lock()
	roots := make([]string, 0, len(g.watched))
	for r := range g.watched {
		roots = append(roots, r)
	}
	g.mu.Unlock()
	var out []string
	for _, root := range roots {
		notes, _, _ := checkRoot(context.Background(), nil, root, g.quarantine, g.names(root))
		out = append(out, notes...)
		g.mu.Lock()
		delete(g.watched, root)
		g.mu.Unlock()
	}
	return out
}

// ended is what a background job's end (or kill) runs: a look at the
// root outside any call; idle says whether jobs has no job running.
func (g *RootGuard) ended(root string, jobs *Jobs) {
	g.look(context.Background(), nil, root, func() bool { return jobs.Running() == 0 })
}

// rootNames returns the names directly in root that lead to a protected
// path (permission.ProtectedPaths, and .git, which the list leaves to git
// when it is a directory).
func rootNames(root string) []string {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = filepath.Clean(root)
	}
	names := []string{".git"}
	for _, p := range permission.ProtectedPaths(root) {
		rel, err := filepath.Rel(real, p)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		names = append(names, first)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// absentRootNames returns the protected names missing from root now.
// The root is read once, not each name looked up (a third of the time);
// on the file systems that fold case where darman runs (NTFS, APFS as
// macOS formats it) names are compared folded, as the permission checks
// compare protected paths.
func absentRootNames(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil // no root to look at: nothing to compare with after
	}
	present := make(map[string]bool, len(entries))
	for _, e := range entries {
		present[foldName(e.Name())] = true
	}
	var out []string
	for _, n := range rootNames(root) {
		if !present[foldName(n)] {
			out = append(out, n)
		}
	}
	return out
}

// guardRoot runs a command (run), sandboxed or not, between two looks
// at the protected names of the root (RootGuard.look): the first is for
// what earlier commands left running made since, the second for what
// this one made (the names absent before it are watched from now on);
// what the model is told of them follows the command's output.
func (g *RootGuard) guardRoot(ctx context.Context, env *Env, run func() (Result, string, error)) (Result, string, error) {
	if env.Workspace == nil {
		return run()
	}
	root := env.Workspace.Root()
	before, err := g.look(ctx, env, root, nil)
	if err != nil {
		return Result{}, "", err
	}
	g.arm(root)
	res, output, err := run()
	if err != nil {
		return res, output, err
	}
	after, err := g.look(ctx, env, root, func() bool { return env.Jobs == nil || env.Jobs.Running() == 0 })
	for _, note := range []string{before, after} {
		if note != "" {
			res.Output += "\n" + note
		}
	}
	return res, output, err
}

// lookAt is the look a call of bash_output or bash_kill makes: what a
// background job made so far is asked about in that call.
func (g *RootGuard) lookAt(ctx context.Context, env *Env, res Result) (Result, error) {
	if g == nil || env.Workspace == nil {
		return res, nil
	}
	note, err := g.look(ctx, env, env.Workspace.Root(), func() bool { return env.Jobs == nil || env.Jobs.Running() == 0 })
	if note != "" {
		res.Output += "\n" + note
	}
	return res, err
}

func foldName(n string) string {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		return strings.ToLower(n)
	}
	return n
}

// checkRoot looks at names absent before a command: each one made since
// is asked about in the call env (protected_path; nil env: outside any
// call, it is not allowed); one not allowed is moved into quarantine. It
// returns what the model is told of each and the names kept.
func checkRoot(ctx context.Context, env *Env, root, quarantine string, absent []string) (notes, kept []string, err error) {
	for _, n := range absent {
		p := filepath.Join(root, n)
		info, err := os.Lstat(p)
		if err != nil {
			continue
		}
		shown := n
		if info.IsDir() {
			shown += "/"
		}
		ok := false
		if env != nil {
			_, ok, err = permit(ctx, env, permission.Call{
				Permission: permission.ProtectedPath, Subjects: []string{n}, Dir: root,
				Title:    "Keep " + shown + ": a command created " + shown + " at the workspace root",
				Metadata: map[string]any{"reason": "a command created " + shown + " at the workspace root, a protected path other programs run things from"},
			})
			if err != nil {
				return notes, kept, err
			}
		}
		if ok {
			kept = append(kept, n)
			notes = append(notes, fmt.Sprintf("A command created %s at the workspace root (a protected path); the user allowed keeping it.", shown))
			continue
		}
		aside, qerr := quarantinePath(p, quarantine)
		if qerr != nil {
			notes = append(notes, fmt.Sprintf("A command created %s at the workspace root, a protected path keeping it was not allowed for (permission %s), and it could not be moved aside: %v. Tell the user to remove it.", shown, permission.ProtectedPath, qerr))
			continue
		}
		notes = append(notes, fmt.Sprintf("A command created %s at the workspace root, a protected path (other programs run what it configures); keeping it was not allowed (permission %s), so darman removed it from the workspace and moved it to %s. Do not create it again; if the user wants it, they can create it themselves or allow %s.", shown, permission.ProtectedPath, aside, permission.ProtectedPath))
	}
	return notes, kept, nil
}

// quarantinePath moves p into a new directory of its own under dir and
// returns where it is now. Across file systems it is copied and then
// removed, only once the copy is whole.
func quarantinePath(p, dir string) (string, error) {
	if dir == "" {
		return "", errors.New("darman has no data directory to keep it in")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	box, err := os.MkdirTemp(dir, time.Now().UTC().Format("20060102T150405")+"-*")
	if err != nil {
		return "", err
	}
	dst := filepath.Join(box, filepath.Base(p))
	err = os.Rename(p, dst)
	if errors.Is(err, syscall.EXDEV) {
		if err = copyTree(p, dst); err == nil {
			err = os.RemoveAll(p)
		}
	}
	if err != nil {
		return "", err
	}
	return dst, nil
}

// copyTree copies the file, link or directory src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			return copyFile(path, to, info.Mode().Perm())
		}
		return nil // a socket or fifo: nothing to keep
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
