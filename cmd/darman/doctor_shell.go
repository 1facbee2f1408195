package main

import (
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/tool"
)

// diagnoseShell says which shell the bash tool runs commands in: on
// Windows, Git for Windows' bash or else PowerShell, whose command lines
// darman checks with its own, narrower parser.
func diagnoseShell(r *report) {
	path, lang, err := tool.Shell()
	switch {
	case err != nil:
		r.add("environment", "shell", "fail", "the bash tool cannot run commands: "+err.Error())
	case lang == permission.PowerShell:
		r.add("environment", "shell", "warn", "PowerShell ("+path+"): Git for Windows' bash was not found (install Git for Windows or set "+tool.GitBashEnv+"); "+
			"PowerShell command lines are checked by darman's PowerShell parser, which asks about whatever it cannot read")
	default:
		r.add("environment", "shell", "ok", "the bash tool runs "+path)
	}
}
