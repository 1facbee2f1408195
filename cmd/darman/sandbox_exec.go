package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/internal/config"
	"github.com/darman-dev/darman/internal/sandbox"
)

// sandboxExecCommand is the hidden subcommand the sandbox re-executes
// darman as ("darman sandbox-exec POLICY PATH ARGV..."): it confines
// itself and execve's the shell. It is handled before the command tree is
// built, since it runs once per command the model runs.
const sandboxExecCommand = "sandbox-exec"

func sandboxExec(args []string, stderr io.Writer) int {
	return sandbox.Exec(args, stderr)
}

// newSandbox builds the sandbox of a workspace's commands from the
// configuration.
func newSandbox(cfg config.Config) *sandbox.Sandbox {
	return sandbox.New(sandboxOptions(cfg))
}

func sandboxOptions(cfg config.Config) sandbox.Options {
	c := cfg.Sandbox
	return sandbox.Options{
		Mode:         sandbox.Mode(c.Mode),
		Network:      c.Network,
		UnixSockets:  c.UnixSockets,
		WritableDirs: c.WritableDirs,
		ReadableDirs: c.ReadableDirs,
		Caches:       c.Caches,
		Protect:      c.Protect,
		// The permission checks' list of protected paths is the
		// sandbox's too: one list.
		Protected: permission.ProtectedPaths,
		// The temp dirs live in darman's own: an unrelated TMPDIR left by
		// a parent sandbox is no place for them.
		TempRoot:    tempRoot(),
		ProbeRecord: probeRecord(),
	}
}

// probeRecord is where the sandbox keeps what its probe found, for the
// next darman on this boot: in the user's cache directory.
func probeRecord() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "darman", "sandbox-probe.json")
}

func tempRoot() string {
	if d := os.Getenv("TMPDIR"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return os.TempDir()
}

// networkFor returns whether a command line may use the network by the
// configured sandbox.networkCommands: every simple command of the line
// must match one of the patterns (as bash permission rules match the
// subjects SplitBash finds).
func networkFor(cfg config.Config) func(command string) bool {
	patterns := cfg.Sandbox.NetworkCommands
	if len(patterns) == 0 {
		return nil
	}
	rules := make([]permission.Rule, 0, len(patterns))
	for _, p := range patterns {
		rules = append(rules, permission.Rule{Permission: permission.Bash, Pattern: strings.TrimSpace(p), Action: permission.Allow})
	}
	return func(command string) bool {
		cmds, err := permission.SplitBash(command)
		if err != nil || len(cmds) == 0 {
			return false
		}
	next:
		for _, c := range cmds {
			if c.Reason != "" {
				return false
			}
			for _, r := range rules {
				if r.Matches(permission.Bash, c.Subject) {
					continue next
				}
			}
			return false
		}
		return true
	}
}

// sandboxStatus is the sandbox as the editors show it (darman.status's
// agent.sandbox, ACP's session _meta): what it does, in a line too.
func sandboxStatus(sb *sandbox.Sandbox) map[string]any {
	if sb == nil {
		return map[string]any{"active": false, "summary": "sandbox: none"}
	}
	st := sb.Status()
	return map[string]any{"active": st.Active(), "kind": st.Kind, "mode": st.Mode, "abi": st.ABI,
		"network": st.Network, "protectedReadOnly": st.ProtectedReadOnly, "reason": st.Reason, "readOnlyView": st.ReadOnlyView, "pidNamespace": st.PIDNamespace, "missing": st.Missing, "summary": st.Summary()}
}

// quarantineDir is where the bash tool moves a protected name a
// command made at the workspace root when keeping it is not allowed: in
// darman's data directory, never deleted.
func quarantineDir(cfg config.Config) string {
	if cfg.DataDir == "" {
		return ""
	}
	return filepath.Join(cfg.DataDir, "quarantine")
}
