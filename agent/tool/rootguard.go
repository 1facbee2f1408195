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
	"syscall"
	"time"

	"github.com/darman-dev/darman/agent/permission"
)

// The protected names directly at the workspace root.
//
// The sandbox keeps the protected paths read-only, and a missing one in
// git's directory or below an existing folder cannot be made either; one
// missing directly at the root (.envrc, .husky/, .vscode/, .git/ in a
// folder that is not a repository) can: a mount cannot refuse one name in
// a directory whose other new files must stay possible. So the bash tool
// notes which of those names are absent before a confined command and
// looks again after it: one the command made is asked about as a write to
// a protected path (protected_path), and when that is not allowed it is
// moved into the quarantine directory, never deleted.
//
// The look is after the command's end: what it left running in its
// process group was stopped or became a background job by then. The
// commands of one darman share one PID namespace (internal/sandbox's
// pidNS), which ends only with darman, so a process that left the group
// (setsid) lives on, as it does without a PID namespace. What a background
// job (run_in_background, or leftovers adopted as one) or such a process
// makes later is not seen by this look.

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

// guardRoot runs a command (run), and when it is confined looks at the
// protected names absent at the root before it (see checkRoot); what the
// model is told of them follows the command's output.
func (b *bashSandbox) guardRoot(ctx context.Context, env *Env, confined bool, run func() (Result, string, error)) (Result, string, error) {
	if !confined || env.Workspace == nil {
		return run()
	}
	root := env.Workspace.Root()
	absent := absentRootNames(root)
	res, output, err := run()
	if err != nil || len(absent) == 0 {
		return res, output, err
	}
	note, err := checkRoot(ctx, env, root, b.quarantine, absent)
	if note != "" {
		res.Output += "\n" + note
	}
	return res, output, err
}

func foldName(n string) string {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		return strings.ToLower(n)
	}
	return n
}

// checkRoot looks at the names absent before a command: each one the
// command made is asked about (protected_path); one not allowed is moved
// into quarantine. It returns what the model is told ("" when nothing was
// made).
func checkRoot(ctx context.Context, env *Env, root, quarantine string, absent []string) (string, error) {
	var notes []string
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
		_, ok, err := permit(ctx, env, permission.Call{
			Permission: permission.ProtectedPath, Subjects: []string{n}, Dir: root,
			Title:    "Keep " + shown + ": the command created " + shown + " at the workspace root",
			Metadata: map[string]any{"reason": "the command created " + shown + " at the workspace root, a protected path other programs run things from"},
		})
		if err != nil {
			return strings.Join(notes, "\n"), err
		}
		if ok {
			notes = append(notes, fmt.Sprintf("The command created %s at the workspace root (a protected path); the user allowed keeping it.", shown))
			continue
		}
		aside, qerr := quarantinePath(p, quarantine)
		if qerr != nil {
			notes = append(notes, fmt.Sprintf("The command created %s at the workspace root, a protected path keeping it was not allowed for (permission %s), and it could not be moved aside: %v. Tell the user to remove it.", shown, permission.ProtectedPath, qerr))
			continue
		}
		notes = append(notes, fmt.Sprintf("The command created %s at the workspace root, a protected path (other programs run what it configures); keeping it was not allowed (permission %s), so darman removed it from the workspace and moved it to %s. Do not create it again; if the user wants it, they can create it themselves or allow %s.", shown, permission.ProtectedPath, aside, permission.ProtectedPath))
	}
	return strings.Join(notes, "\n"), nil
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
