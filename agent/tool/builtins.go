package tool

import (
	"time"

	"github.com/darman-dev/darman/internal/child"
)

// Options configure the built-in tools.
type Options struct {
	// Skills gives the skill tool its skills; nil leaves the skill tool out.
	Skills Skills
	// Ripgrep is the path of the rg binary glob, grep and list run; ""
	// looks for rg on PATH when Builtins is called.
	Ripgrep string
	// NoRipgrep makes glob, grep and list use their Go implementation even
	// when rg is available. Both give the same results; rg is faster.
	NoRipgrep bool
	// MaxBashTimeout bounds the timeout a bash call may ask for; zero means
	// ten minutes.
	MaxBashTimeout time.Duration
	// Children records the process groups bash starts, so the composition
	// root can stop any left at exit; nil records nothing.
	Children *child.Registry
	// Diagnostics gives the diagnostics tool the language servers' view;
	// nil leaves the tool out.
	Diagnostics Diagnostics
	// Environ is the environment of the commands bash runs (NAME=value
	// entries, secrets already filtered out: see internal/childenv); nil
	// means darman's own.
	Environ []string
	// WebFetch is the webfetch tool's address policy; the zero value
	// refuses private and local addresses.
	WebFetch WebFetchOptions
}

// Builtins returns darman's built-in tools, configured by opts.
func Builtins(opts Options) []Tool {
	search := pickSearcher(opts)
	tools := []Tool{
		newRead(),
		newWrite(),
		newEdit(),
		newMultiedit(),
		newApplyPatch(),
		newGlob(search),
		newGrep(search),
		newList(search),
		newBash(opts.MaxBashTimeout, opts.Children, opts.Environ),
		newBashOutput(),
		newBashKill(),
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
