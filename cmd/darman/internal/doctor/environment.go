package doctor

import (
	"fmt"
	"os"
	"strings"

	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/childenv"
)

// Shell says which shell the bash tool runs commands in: on
// Windows, Git for Windows' bash or else PowerShell, whose command lines
// darman checks with its own, narrower parser.
func Shell(r *Report) {
	path, lang, err := tool.Shell()
	switch {
	case err != nil:
		r.Add("environment", "shell", "fail", "the bash tool cannot run commands: "+err.Error())
	case lang == permission.PowerShell:
		r.Add("environment", "shell", "warn", "PowerShell ("+path+"): Git for Windows' bash was not found (install Git for Windows or set "+tool.GitBashEnv+"); "+
			"PowerShell command lines are checked by darman's PowerShell parser, which asks about whatever it cannot read")
	default:
		r.Add("environment", "shell", "ok", "the bash tool runs "+path)
	}
}

// ChildEnv reports which of darman's variables the processes it
// starts for others do not get, by name (never by value).
func ChildEnv(r *Report, p childenv.Policy) {
	inherit := string(p.Inherit)
	if inherit == "" {
		inherit = string(childenv.InheritAll)
	}
	drops := childenv.Dropped(os.Environ(), p)
	detail := "inherit " + inherit + "; commands, MCP servers and language servers get every variable"
	if len(drops) > 0 {
		var names []string
		for _, d := range drops {
			if d.Why != "inherit" {
				names = append(names, d.Name+" ("+d.Why+")")
			}
		}
		detail = fmt.Sprintf("inherit %s; %d variable(s) left out", inherit, len(drops))
		if len(names) > 0 {
			detail += ": " + strings.Join(names, ", ")
		}
	}
	if len(p.Keep) > 0 {
		detail += "; kept by shell.env.keep: " + strings.Join(p.Keep, ", ")
	}
	r.Add("environment", "child processes", "ok", detail)
	envBlock(r, p)
}

// envBlock reports which variables darman wiped from its own
// environment block, which other processes read (by name).
func envBlock(r *Report, p childenv.Policy) {
	childenv.Scrub(p)
	names, err := childenv.Scrubbed()
	switch {
	case err != nil:
		r.Add("environment", "darman's environment block", "warn", "could not wipe the secrets' values ("+err.Error()+"): a command running as root can read them in /proc/PID/environ")
	case len(names) > 0:
		r.Add("environment", "darman's environment block", "ok", "wiped the values of "+strings.Join(names, ", ")+" (darman keeps its own copy)")
	}
}
