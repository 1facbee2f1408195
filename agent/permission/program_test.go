package permission

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestProgramHoweverSpelled: with every command allowed but rm denied, a
// command that runs rm is denied however the line names it, and one that
// only mentions rm is not.
func TestProgramHoweverSpelled(t *testing.T) {
	root := t.TempDir()
	os.Symlink("/bin/rm", filepath.Join(root, "zap"))
	rules := append(Defaults(), Rule{Permission: Bash, Pattern: "*", Action: Allow}, Rule{Permission: Bash, Pattern: "rm *", Action: Deny},
		Rule{Permission: Bash, Pattern: "shred *", Action: Ask})
	c := newChecker(t, Options{Root: root, Rules: rules})
	for _, line := range []string{
		"/bin/rm b.txt", "/usr/bin/rm c.txt", "./rm x", "bin/rm x", "./zap x", "command rm x", "command -p rm x",
		"env rm x", "env -i A=1 /bin/rm x", "nice -n 5 rm x", "timeout 5 /usr/bin/rm x", "nohup rm x",
		"busybox rm x", "/bin/busybox rm -f x", "echo x | xargs rm", "echo x | xargs -n 1 -I{} rm {}",
		"find . -name x -exec rm {} \\;", "find . -exec /bin/rm -f {} +", "sudo -u root rm x", "xargs busybox rm < list",
		"stdbuf -o0 rm x", "setsid rm x", "flock /tmp/l rm x", "\"/bin/rm\" x",
	} {
		err := c.Check(t.Context(), bash(line))
		var d *DeniedError
		if !errors.As(err, &d) || !errors.Is(err, ErrDenied) || d.Rule == nil || d.Rule.Pattern != "rm *" {
			t.Errorf("%s: %v, want denied by rm *", line, err)
		}
	}
	for _, line := range []string{"/usr/bin/shred x", "xargs shred"} {
		err := c.Check(t.Context(), bash(line))
		var d *DeniedError
		if !errors.As(err, &d) || d.Rule != nil && d.Rule.Action == Deny {
			t.Errorf("%s: %v, want asked by shred *", line, err)
		}
	}
	for _, line := range []string{"echo rm x", "grep rm x", "/bin/ls rm", "git rm --cached x", "ls -la", "cat rm"} {
		if err := c.Check(t.Context(), bash(line)); err != nil {
			t.Errorf("%s: %v, want allowed", line, err)
		}
	}
}

// TestAllowRuleIsNotAWorkspaceProgram: an allow rule for ls allows the
// system's ls, not a file called ls in a workspace directory on PATH.
func TestAllowRuleIsNotAWorkspaceProgram(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "bin"), 0o755)
	os.WriteFile(filepath.Join(root, "bin", "ls"), []byte("#!/bin/sh\ntouch /tmp/pwned\n"), 0o755)
	real, _ := filepath.EvalSymlinks(root)
	rules := append(Defaults(), Rule{Permission: Bash, Pattern: "ls *", Action: Allow})
	t.Setenv("PATH", filepath.Join(real, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	c := newChecker(t, Options{Root: root, Rules: rules})
	if err := c.Check(t.Context(), bash("ls -la")); !errors.Is(err, ErrDenied) {
		t.Errorf("ls with the workspace's bin/ls first on PATH: %v, want asked", err)
	}
	if err := c.Check(t.Context(), bash("echo hi")); err != nil {
		t.Errorf("echo, a builtin: %v", err)
	}
	t.Setenv("PATH", os.Getenv("PATH")[len(filepath.Join(real, "bin"))+1:])
	c = newChecker(t, Options{Root: root, Rules: rules})
	if err := c.Check(t.Context(), bash("ls -la")); err != nil {
		t.Errorf("ls with no workspace directory on PATH: %v", err)
	}
}
