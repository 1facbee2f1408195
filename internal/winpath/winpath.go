// Package winpath handles Windows paths and their file: URIs as strings,
// whatever OS darman runs on, so that the logic is tested everywhere
// (path/filepath only knows the OS it was built for). It knows three
// forms of absolute path: a drive letter (C:\Users\me), UNC
// (\\server\share\dir) and the extended-length forms (\\?\C:\…,
// \\?\UNC\server\share\…, and the NT \??\C:\…) that some Windows APIs
// return for the same places.
package winpath

import (
	"errors"
	"net/url"
	"path"
	"strings"
)

// Clean gives the one spelling of a Windows path that darman compares:
// separators as \, the extended-length prefix dropped, the drive letter
// in upper case, "." and ".." resolved (never above the root), no
// trailing separator but the root's. Windows compares the rest without
// case; Clean keeps it as written.
func Clean(p string) string {
	p = strings.ReplaceAll(p, "/", `\`)
	switch {
	case hasPrefixFold(p, `\\?\UNC\`), hasPrefixFold(p, `\??\UNC\`):
		p = `\\` + p[len(`\\?\UNC\`):]
	case strings.HasPrefix(p, `\\?\`), strings.HasPrefix(p, `\??\`), strings.HasPrefix(p, `\\.\`) && isDrive(p[4:]):
		p = p[4:]
	}
	vol := Volume(p)
	rest := p[len(vol):]
	if len(vol) == 2 {
		vol = strings.ToUpper(vol[:1]) + ":"
	}
	var out []string
	for _, e := range strings.Split(rest, `\`) {
		switch e {
		case "", ".":
		case "..":
			if len(out) > 0 && out[len(out)-1] != ".." {
				out = out[:len(out)-1]
			} else if vol == "" && !strings.HasPrefix(rest, `\`) {
				out = append(out, "..")
			}
		default:
			out = append(out, e)
		}
	}
	joined := strings.Join(out, `\`)
	if strings.HasPrefix(rest, `\`) || strings.HasPrefix(vol, `\\`) {
		return vol + `\` + joined
	}
	if joined == "" && vol == "" {
		return "."
	}
	return vol + joined
}

// Volume is the path's volume: "C:" or `\\server\share`, else "".
func Volume(p string) string {
	if isDrive(p) {
		return p[:2]
	}
	if len(p) > 2 && (p[0] == '\\' || p[0] == '/') && (p[1] == '\\' || p[1] == '/') && p[2] != '\\' && p[2] != '/' && p[2] != '?' && p[2] != '.' {
		// \\server\share
		rest := p[2:]
		i := strings.IndexAny(rest, `\/`)
		if i < 0 {
			return p
		}
		j := strings.IndexAny(rest[i+1:], `\/`)
		if j < 0 {
			return p
		}
		return p[:2+i+1+j]
	}
	return ""
}

// IsAbs reports whether p is an absolute Windows path: a drive letter
// and a separator, UNC, or an extended-length form.
func IsAbs(p string) bool {
	p = Clean(p)
	v := Volume(p)
	return strings.HasPrefix(v, `\\`) || len(v) == 2 && len(p) > 2 && p[2] == '\\'
}

// Within reports whether path is root or below it, comparing as Windows
// does: without case, whichever form each is spelt in.
func Within(root, path string) bool {
	r, p := strings.ToLower(Clean(root)), strings.ToLower(Clean(path))
	if r == p {
		return true
	}
	if !strings.HasSuffix(r, `\`) {
		r += `\`
	}
	return strings.HasPrefix(p, r)
}

// FromURI is the Windows path a file: URI names: file:///c%3A/Users/me
// (as VS Code sends it) and file:///C:/Users/me are C:\Users\me;
// file://server/share/dir is \\server\share\dir.
func FromURI(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" {
		return "", errors.New("not a file: URI")
	}
	p := u.Path
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		p = `\\` + u.Host + p
	} else {
		p = strings.TrimPrefix(p, "/")
	}
	if !IsAbs(p) {
		return "", errors.New("it does not name an absolute Windows path")
	}
	return Clean(p), nil
}

// ToURI is the file: URI of an absolute Windows path: file:///C:/Users/me,
// file://server/share/dir for UNC, with what needs it percent-encoded.
func ToURI(p string) string {
	p = Clean(p)
	if v := Volume(p); strings.HasPrefix(v, `\\`) {
		host, rest, _ := strings.Cut(p[2:], `\`)
		return (&url.URL{Scheme: "file", Host: host, Path: "/" + strings.ReplaceAll(rest, `\`, "/")}).String()
	}
	return (&url.URL{Scheme: "file", Path: "/" + strings.ReplaceAll(p, `\`, "/")}).String()
}

func isDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && isLetter(p[0])
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// Form is what a path word names in Git for Windows' bash (see FromMSYS).
type Form uint8

const (
	// Relative is a path relative to the shell's current directory.
	Relative Form = iota
	// Absolute is an absolute Windows path: a drive letter and a
	// separator, UNC, or an extended-length form.
	Absolute
	// Null is the null device, /dev/null (NUL to a Windows program).
	Null
	// DriveRelative is relative to a directory the word does not name:
	// C:foo is taken from drive C:'s own current directory, and \foo from
	// the root of the current drive.
	DriveRelative
	// Unmapped is any other absolute POSIX path (/usr, /etc, /tmp, /,
	// /dev/…): MSYS maps it into its own root (Git's installation
	// directory) or through its mount table, neither of which darman reads.
	Unmapped
)

// FromMSYS is the path Git for Windows' bash (MSYS) takes the path word w
// to, and what form it has. /c/Users/me (and /C/…) is C:/Users/me, /c is
// C:/, //server/share/x is UNC; Windows paths (C:/x, C:\x, \\server\share)
// are themselves. The separators after the drive are left as written, as
// MSYS passes them to a Windows program; Clean gives darman's spelling. A
// Relative, DriveRelative or Unmapped word is returned as it is, since
// where it lands is not a Windows path the word alone names.
func FromMSYS(w string) (string, Form) {
	switch {
	case w == "/dev/null":
		return "NUL", Null
	case len(w) >= 2 && w[0] == '/' && isLetter(w[1]) && (len(w) == 2 || w[2] == '/'):
		// MSYS resolves .. in its own tree first: /c/.. is its root (/),
		// not C:\, so a path that climbs out of the drive lands in Git's
		// installation or mount table.
		c := path.Clean(w)
		if len(c) < 2 || !isLetter(c[1]) || len(c) > 2 && c[2] != '/' {
			return w, Unmapped
		}
		return strings.ToUpper(c[1:2]) + ":/" + strings.TrimLeft(c[2:], "/"), Absolute
	case isDrive(w):
		if len(w) > 2 && (w[2] == '/' || w[2] == '\\') {
			return w, Absolute
		}
		return w, DriveRelative
	case strings.HasPrefix(w, "//"), strings.HasPrefix(w, `\\`):
		if IsAbs(w) {
			// UNC or an extended-length form, in the one spelling
			// (\\?\C:\x is C:\x), so that it compares with the
			// workspace's.
			return Clean(w), Absolute
		}
		return w, Unmapped // ///x, \\.\pipe\x: no share named
	case strings.HasPrefix(w, "/"):
		return w, Unmapped
	case strings.HasPrefix(w, `\`):
		return w, DriveRelative // the current drive's root
	}
	return w, Relative
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
