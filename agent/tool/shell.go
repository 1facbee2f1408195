package tool

import (
	"errors"
	"strings"

	"github.com/darman-dev/darman/agent/permission"
)

// GitBashEnv names the variable that points the bash tool at a bash.exe on
// Windows (Git for Windows' bash, found on PATH and in the usual install
// directories without it).
const GitBashEnv = "DARMAN_GIT_BASH_PATH"

// shellChoice is the program a command line runs in and how: the shell's
// path, the arguments before the command line, and the language its
// permission is checked in (permission.Bash's "" or permission.PowerShell).
type shellChoice struct {
	path string
	args []string
	lang string
}

// argv is the command line that runs command in the shell.
func (s shellChoice) argv(command string) []string {
	return append(append([]string{s.path}, s.args...), command)
}

// windowsShells finds the shell on Windows, in order: the bash named by
// DARMAN_GIT_BASH_PATH (which must exist); Git for Windows' bash beside
// the git.exe on PATH, or a bash.exe on PATH other than WSL's launcher in
// System32; Git's usual install directories; then PowerShell (pwsh, then
// Windows PowerShell). It is pure logic over what getenv, lookPath and
// exists report, so that it is tested on any OS.
func windowsShells(getenv func(string) string, lookPath func(string) (string, error), exists func(string) bool) (shellChoice, error) {
	bash := func(p string) shellChoice { return shellChoice{path: p, args: []string{"-c"}} }
	if p := getenv(GitBashEnv); p != "" {
		if !exists(p) {
			return shellChoice{}, errors.New(GitBashEnv + " is " + p + ", which does not exist; point it at Git for Windows' bash.exe (e.g. C:\\Program Files\\Git\\bin\\bash.exe) or unset it")
		}
		return bash(p), nil
	}
	if git, err := lookPath("git.exe"); err == nil {
		// Git for Windows puts git.exe in Git\cmd (or Git\bin, Git\mingw64\bin).
		for _, up := range []string{`..\bin\bash.exe`, `bash.exe`, `..\..\bin\bash.exe`} {
			if p := winJoin(winDir(git), up); exists(p) {
				return bash(p), nil
			}
		}
	}
	if p, err := lookPath("bash.exe"); err == nil && !strings.HasPrefix(strings.ToLower(p), strings.ToLower(winJoin(getenv("SystemRoot"), "System32")+`\`)) {
		return bash(p), nil
	}
	for _, base := range []string{getenv("ProgramFiles"), getenv("ProgramW6432"), getenv("ProgramFiles(x86)"), winJoin(getenv("LOCALAPPDATA"), "Programs")} {
		if base == "" || base == "Programs" {
			continue
		}
		if p := winJoin(base, `Git\bin\bash.exe`); exists(p) {
			return bash(p), nil
		}
	}
	ps := func(p string) shellChoice {
		return shellChoice{path: p, args: []string{"-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command"}, lang: permission.PowerShell}
	}
	for _, name := range []string{"pwsh.exe", "powershell.exe"} {
		if p, err := lookPath(name); err == nil {
			return ps(p), nil
		}
	}
	if root := getenv("SystemRoot"); root != "" {
		if p := winJoin(root, `System32\WindowsPowerShell\v1.0\powershell.exe`); exists(p) {
			return ps(p), nil
		}
	}
	return shellChoice{}, errors.New("no shell found: install Git for Windows (its bash is used), or set " + GitBashEnv + " to a bash.exe; PowerShell was not found either")
}

// winDir is a Windows path's directory.
func winDir(p string) string {
	if i := strings.LastIndexAny(p, `\/`); i >= 0 {
		return p[:i]
	}
	return "."
}

// winJoin joins Windows path elements, taking ".." back a directory.
func winJoin(dir, rel string) string {
	dir = strings.TrimRight(dir, `\/`)
	for _, e := range strings.Split(rel, `\`) {
		switch e {
		case "", ".":
		case "..":
			dir = winDir(dir)
		default:
			dir += `\` + e
		}
	}
	return dir
}

// shellLanguage is the language the bash tool's command lines are checked
// in: PowerShell's when that is the shell found, else bash's ("").
func shellLanguage() string {
	sh, err := findShell()
	if err != nil {
		return ""
	}
	return sh.lang
}

// shellNote is what the bash tool's description adds when its commands do
// not run in bash: the model must write for the shell that runs them.
func shellNote() string {
	sh, err := findShell()
	if err != nil || sh.lang != permission.PowerShell {
		return ""
	}
	return "\n\nOn this machine commands run in PowerShell (" + sh.path + "), not bash: Git for Windows' bash was not found. Write PowerShell command lines."
}

// ShellArgv is the command line that runs command in the shell the bash
// tool runs commands in: its path, its arguments (-c for bash,
// -NoProfile … -Command for PowerShell), then command. An editor's
// terminal (ACP terminal/create) runs this, so that a line runs in the
// language its permission was checked in (see Shell).
func ShellArgv(command string) ([]string, error) {
	sh, err := findShell()
	if err != nil {
		return nil, err
	}
	return sh.argv(command), nil
}

// Shell says which shell the bash tool runs commands in: its path and the
// language its command lines are checked in ("" for bash,
// permission.PowerShell), or why there is none (for darman doctor).
func Shell() (path, language string, err error) {
	sh, err := findShell()
	return sh.path, sh.lang, err
}
