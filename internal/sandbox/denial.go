package sandbox

import (
	"path/filepath"
	"strings"

	"github.com/darman-dev/darman/internal/lazyre"
)

// denialWords are what programs print when the kernel refused them:
// EACCES, EPERM, EROFS, and the failures a closed network leads to.
var denialWords = []string{
	"permission denied", "operation not permitted", "read-only file system",
	"could not resolve host", "temporary failure in name resolution", "name or service not known",
	"network is unreachable", "socket: ", "dial tcp", "dial udp", "connect: ", "econnrefused", "eacces", "eperm", "erofs",
}

// deniedWords are the kernel's refusals as programs print them.
var deniedWords = []string{"permission denied", "operation not permitted", "read-only file system", "eacces", "eperm", "erofs"}

// netFailures are what a closed network leads to, whatever the command.
var netFailures = []string{"could not resolve host", "temporary failure in name resolution", "name or service not known", "network is unreachable", "eai_again", "getaddrinfo enotfound", "dial tcp", "dial udp"}

// netHints say a refused command was using the network.
var netHints = []string{"/dev/tcp/", "/dev/udp/", "curl", "wget", "http://", "https://", "af_inet", "connect", "dial", "socket", "nc ", "ncat", "ssh ", "git fetch", "git push", "git clone", "npm install", "pip install", "go get", "go mod download"}

// unixHints say a refused command was using a Unix socket.
var unixHints = []string{"af_unix", "unix", ".sock", "nc -u", "socat", "ssh-add", "gpg", "docker"}

// pathRE finds absolute paths in error text.
var pathRE = lazyre.New(`(?:^|[\s'"‘“(:=])(/[^\s'"’”:)]+)`)

// Explain looks at what a command (the line command) that failed under
// the sandbox for req printed and, when it looks like the sandbox refused
// something, returns a note for the model naming the rule that refused it
// and how the user can allow it; "" when nothing points at the sandbox.
func (s *Sandbox) Explain(command, output string, req Request) string {
	st := s.Status()
	if !st.Active() {
		return ""
	}
	low := strings.ToLower(output)
	if !containsAny(low, denialWords) {
		return ""
	}
	s.mu.Lock()
	tmp := s.temps[req.Session]
	s.mu.Unlock()
	pol := s.Policy(req, tmp)
	both := strings.ToLower(command) + "\n" + low
	var notes []string
	seen := map[string]bool{}
	note := func(n string) {
		if !seen[n] {
			seen[n] = true
			notes = append(notes, n)
		}
	}
	denied := containsAny(low, deniedWords)
	if !pol.Network && (containsAny(low, netFailures) || denied && containsAny(both, netHints)) {
		note("the network is off in the sandbox (rule: network). The user can turn it on with \"sandbox\": {\"network\": true}, or for commands like this one with \"sandbox\": {\"networkCommands\": [\"<command> *\"]}")
	}
	if !pol.UnixSockets && st.ABI < landlockPathUnixABI && denied && containsAny(both, unixHints) {
		note("Unix domain sockets are refused in the sandbox on this kernel, so that commands cannot reach ssh-agent, gpg-agent or docker (rule: unixSockets). The user can allow them with \"sandbox\": {\"unixSockets\": true}")
	}
	for _, line := range strings.Split(output, "\n") {
		l := strings.ToLower(line)
		if !containsAny(l, deniedWords) {
			continue
		}
		found := false
		for _, m := range pathRE.FindAllStringSubmatchIndex(line, -1) {
			p := line[m[2]:m[3]]
			// Not a program's name at the start of its message
			// ("/usr/bin/bash: …"), nor bash's network pseudo-files.
			if strings.TrimSpace(line[:m[2]]) == "" && strings.HasPrefix(line[m[3]:], ":") && !strings.HasPrefix(line[m[3]:], ": Permission") && !strings.HasPrefix(line[m[3]:], ": Read-only") {
				continue
			}
			if strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/") {
				continue
			}
			if r := s.rule(pol, filepath.Clean(p)); r != "" {
				note(r)
				found = true
			}
		}
		if !found && strings.Contains(l, "read-only file system") {
			note("the file is a protected path, read-only for commands (rule: protected paths, such as .git/hooks, .git/config, .git/commondir, .claude/, .mcp.json, .vscode/, .envrc; they make other programs run: edit them with the edit tools, which ask the user)")
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "This looks refused by darman's sandbox: " + strings.Join(notes, "; ") + ". Work inside the workspace (or $TMPDIR) where you can; otherwise tell the user what needs allowing."
}

// rule names the rule that keeps path from a command under pol, or "".
func (s *Sandbox) rule(pol Policy, path string) string {
	for _, p := range pol.ReadOnly {
		if under(path, p) {
			return path + " is a protected path, read-only for commands (rule: protected paths; they make other programs run: edit them yourself with the edit tools, which ask the user)"
		}
	}
	for _, d := range append(append([]string{}, pol.WriteDirs...), pol.WriteFiles...) {
		if under(path, d) {
			return ""
		}
	}
	if pol.Home != "" && under(path, pol.Home) {
		readable := false
		for _, d := range pol.ReadDirs {
			if under(path, d) {
				readable = true
			}
		}
		if !readable {
			return path + " is in the home directory, which commands may not read outside the toolchains' directories (rule: reads; the user can add it with \"sandbox\": {\"readableDirs\": [...]}, never for secrets)"
		}
	}
	return path + " is outside the directories commands may write: the workspace, $TMPDIR and the toolchain caches (rule: writes; the user can add a directory with \"sandbox\": {\"writableDirs\": [...]})"
}

func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
