package permission

import (
	"strings"

	"github.com/darman-dev/darman/internal/winpath"
)

// On Windows the bash tool runs Git for Windows' bash, whose MSYS layer
// reads a path word its own way: /c/Users is C:\Users, and /usr, /tmp or
// /etc are directories of Git's installation (or of its mount table). A
// Checker built on Windows judges a bash line's paths as MSYS takes them
// (see Checker.msys); the functions here are the pure part, tested on
// every OS.

// msysPath is the path Git bash hands a command for the path word text:
// an absolute Windows path (slash-separated after the drive), or text
// itself when it is relative. why says why it cannot be judged before the
// command runs (a drive-relative path, a POSIX path MSYS maps into its
// own root); it is then asked about as outside the workspace.
func msysPath(text string) (p, why string) {
	p, form := winpath.FromMSYS(text)
	switch form {
	case winpath.DriveRelative:
		return "", "Git bash takes it from a drive's own current directory, which darman does not know"
	case winpath.Unmapped:
		return "", "Git bash maps this POSIX path into its own installation or mount table, outside the workspace"
	case winpath.Null:
		return "", ""
	}
	return p, ""
}

// msysDir is msysPath for a directory cd may have moved to (see
// Command.Dirs): a chain such as "./a/C:/x" is judged from its last
// component that starts a path of its own (C:/x).
func msysDir(sub string) (dir, why string) {
	if _, form := winpath.FromMSYS(sub); form != winpath.Relative {
		return msysPath(sub)
	}
	comps := strings.Split(sub, "/")
	for i := len(comps) - 1; i >= 0; i-- {
		if _, form := winpath.FromMSYS(comps[i]); form != winpath.Relative {
			return msysPath(strings.Join(comps[i:], "/"))
		}
	}
	return sub, ""
}

// msysAbs reports whether a path msysPath gave is absolute: a drive
// letter and a separator, or UNC. (winpath.IsAbs would also take
// ./C:/x, which Clean turns into C:\x.)
func msysAbs(p string) bool {
	_, form := winpath.FromMSYS(p)
	return form == winpath.Absolute
}

// psPath says why a path word PowerShell (or any Windows program) is
// given cannot be judged before the command runs: \x and /x are rooted at
// the current drive, C:x is taken from drive C:'s own current directory.
// It is "" for an absolute Windows path (C:\x, \\server\share\x) and a
// relative one, which are judged as they are.
func psPath(text string) (why string) {
	const unknown = "a Windows program takes it from a current drive or directory darman does not know"
	switch {
	case strings.HasPrefix(text, "//") || strings.HasPrefix(text, `\\`):
		if winpath.IsAbs(text) {
			return ""
		}
		return unknown
	case strings.HasPrefix(text, "/") || strings.HasPrefix(text, `\`):
		return unknown
	case len(text) >= 2 && text[1] == ':':
		if len(text) > 2 && (text[2] == '/' || text[2] == '\\') {
			return ""
		}
		return unknown
	case strings.HasPrefix(text, "~"):
		return "PowerShell takes ~ to the home directory, outside the workspace"
	}
	// A PowerShell drive (Temp:\x, Env:PATH, HKCU:\x) or a provider path
	// (FileSystem::C:\x): a colon before the first separator.
	if i := strings.IndexAny(text, `:/\`); i > 0 && text[i] == ':' {
		return "PowerShell reads it as a drive or provider path of its own"
	}
	return ""
}
