package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/darman-dev/darman/internal/child"
)

// git runs the real git binary on one shadow repository, isolated from
// everything of the user's: GIT_DIR and GIT_INDEX_FILE are the shadow's,
// the work tree is the workspace, no GIT_* variable of darman's own
// environment gets through, neither the system nor the global
// configuration is read, and hooks, fsmonitor, automatic gc and line-ending
// conversion are off. Nothing it runs touches the workspace's own .git.
type git struct {
	bin     string
	dir     string // the shadow repository (GIT_DIR)
	work    string // the workspace (GIT_WORK_TREE)
	environ []string
}

// isolation is the configuration every call runs with, over whatever the
// shadow's own config file says.
var isolation = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.autocrlf=false",
	"-c", "core.safecrlf=false",
	"-c", "core.symlinks=true",
	"-c", "core.quotePath=false",
	"-c", "core.fsync=none",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "commit.gpgSign=false",
	"-c", "advice.detachedHead=false",
}

func newGit(bin, dir, work string) *git {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"GIT_DIR="+dir,
		"GIT_WORK_TREE="+work,
		"GIT_INDEX_FILE="+dir+"/index",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_LITERAL_PATHSPECS=1",
		"GIT_NO_REPLACE_OBJECTS=1",
		"LC_ALL=C",
	)
	return &git{bin: bin, dir: dir, work: work, environ: env}
}

// run runs git with args in the workspace, stdin as its input, and returns
// its output; a failure carries git's own words.
func (g *git) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return g.runExit(ctx, stdin, 0, args...)
}

// runExit is run for a command whose exit status ok (besides 0) is an
// answer rather than a failure; 0 for none. git runs as a child (see
// internal/child): a git left running by a darman that died, still
// writing the shadow and holding its index.lock, would fail the next
// darman's checkpoints.
func (g *git) runExit(ctx context.Context, stdin []byte, ok int, args ...string) ([]byte, error) {
	cmd := exec.Command(g.bin, append(append([]string{}, isolation...), args...)...)
	cmd.Dir = g.work
	cmd.Env = g.environ
	if args[0] == "init" {
		// A bare repository is made without a work tree; the calls after
		// give it the workspace.
		cmd.Env = slices.DeleteFunc(slices.Clone(g.environ), func(kv string) bool { return strings.HasPrefix(kv, "GIT_WORK_TREE=") })
		cmd.Dir = g.dir
	}
	if args[0] == "check-ignore" {
		// It takes paths, not pathspecs, and refuses the literal magic;
		// a path beginning with ':' comes to it as "./:..." instead.
		cmd.Env = slices.DeleteFunc(slices.Clone(g.environ), func(kv string) bool { return strings.HasPrefix(kv, "GIT_LITERAL_PATHSPECS=") })
	}
	p, err := child.Start(cmd, child.Options{Name: "checkpoint git " + args[0], Stdin: stdin != nil})
	if err != nil {
		return nil, fmt.Errorf("git %s: %v", args[0], err)
	}
	var out, errb bytes.Buffer
	var streams sync.WaitGroup
	streams.Go(func() { out.ReadFrom(p.Stdout) })
	streams.Go(func() { errb.ReadFrom(p.Stderr) })
	if stdin != nil {
		streams.Go(func() {
			// Fails once git has exited or Stop has closed it.
			p.Stdin.Write(stdin)
			p.Stdin.Close()
		})
	}
	select {
	case <-p.Exited():
	case <-ctx.Done():
	}
	p.Stop(0)
	streams.Wait()
	p.Stdout.Close()
	p.Stderr.Close()
	code, signal := p.ExitCode()
	switch {
	case code == 0 && signal == "":
		return out.Bytes(), nil
	case ok != 0 && code == ok:
		return out.Bytes(), nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	msg := strings.TrimSpace(errb.String())
	if msg == "" {
		msg = "it did not exit"
		if st := p.State(); st != nil {
			msg = st.String()
		}
	}
	return out.Bytes(), fmt.Errorf("git %s: %s", args[0], msg)
}

// zsplit splits NUL-terminated output.
func zsplit(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}
