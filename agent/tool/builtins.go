package tool

import (
	"time"

	"github.com/darman-dev/darman/agent/tool/internal/search"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/sandbox"
)

// Options configure the built-in tools.
type Options struct {
	// Skills gives the skill tool its skills; nil leaves the skill tool out.
	Skills Skills
	// Ripgrep is the path of the rg binary grep runs; "" looks for rg on
	// PATH when Builtins is called. glob and list always walk in Go.
	Ripgrep string
	// NoRipgrep makes grep use its Go implementation even when rg is
	// available. Both give the same results; rg is faster on patterns
	// with no literal to look for first.
	NoRipgrep bool
	// MaxBashTimeout bounds the timeout a bash call may ask for; zero means
	// ten minutes.
	MaxBashTimeout time.Duration
	// Children records the process groups bash starts, so the composition
	// root can stop any left at exit; nil records nothing.
	Children *child.Registry
	// Environ is the environment of the commands bash runs (NAME=value
	// entries, secrets already filtered out: see internal/childenv); nil
	// means darman's own.
	Environ []string
	// Sandbox confines the commands bash runs (foreground and
	// background); nil runs them unsandboxed, silently (tests).
	Sandbox *sandbox.Sandbox
	// Guard watches the protected names at the workspace root (.envrc,
	// .git/ in a folder that is not a repository) that commands make, and
	// moves one aside when keeping it is not allowed (NewRootGuard); the
	// bash tools of one workspace share it. nil makes one of their own
	// that moves nothing aside (the model is told).
	Guard *RootGuard
	// Network says whether a command line may use the network inside the
	// sandbox (sandbox.networkCommands); nil: only when the sandbox
	// itself allows it.
	Network func(command string) bool
	// Diagnostics gives the diagnostics tool the language servers' view;
	// nil leaves the tool out.
	Diagnostics Diagnostics
	// WebFetch is the webfetch tool's address policy; the zero value
	// refuses private and local addresses.
	WebFetch WebFetchOptions
}

// Builtins returns darman's built-in tools, configured by opts.
func Builtins(opts Options) []Tool {
	s := search.Pick(opts.Ripgrep, opts.NoRipgrep)
	bash := newBash(opts.MaxBashTimeout, spawnOf(opts))
	tools := []Tool{
		newRead(),
		newWrite(),
		newEdit(),
		newMultiedit(),
		newApplyPatch(),
		newGlob(),
		newGrep(s),
		newList(),
		bash,
		newBashOutput(bash.sb.guard),
		newBashKill(bash.sb.guard),
		newTodo(),
		newWebFetch(opts.WebFetch),
	}
	if opts.Skills != nil {
		tools = append(tools, newSkill(opts.Skills))
	}
	if opts.Diagnostics != nil {
		tools = append(tools, newDiagnostics(opts.Diagnostics))
	}
	return tools
}

// Bash is the built-in bash tool alone, configured by opts' bash fields
// (MaxBashTimeout, Children, Environ, Sandbox, Guard, Network): what a
// front that runs a client's commands needs, without the other tools.
func Bash(opts Options) Tool { return newBash(opts.MaxBashTimeout, spawnOf(opts)) }

// spawnOf is how the bash tool opts configure starts its commands.
func spawnOf(opts Options) bashSpawn {
	guard := opts.Guard
	if guard == nil {
		guard = NewRootGuard("", opts.Sandbox)
	}
	return bashSpawn{reg: opts.Children, environ: opts.Environ, sb: &bashSandbox{sb: opts.Sandbox, network: opts.Network, guard: guard}}
}
