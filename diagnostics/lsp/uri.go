package lsp

import (
	"fmt"
	"net/url"
	"runtime"
	"strings"

	"github.com/darman-dev/darman/internal/winpath"
)

// URIFromPath makes a file:// URI from an absolute path. On Windows it is
// winpath's spelling: file:///C:/x with the drive letter in upper case,
// file://server/share/x for UNC.
func URIFromPath(path string) DocumentURI { return uriFromPath(runtime.GOOS, path) }

// Path returns the absolute file path a file:// URI names.
func (u DocumentURI) Path() (string, error) { return uriPath(runtime.GOOS, u) }

// UnmarshalText reads a URI a server sent (as a JSON string or a map
// key) in URIFromPath's spelling, so that it compares equal to the URI
// darman sent for the same file: diagnostics and documents are keyed by
// URI, and servers spell the same file differently (file:///c%3A/x.go or
// file:///c:/x.go for darman's file:///C:/x.go on Windows; servers built
// on vscode-uri send file:///x/%40types for file:///x/@types anywhere).
// A URI that names no local file is kept as sent.
func (u *DocumentURI) UnmarshalText(b []byte) error {
	*u = canonicalURI(runtime.GOOS, DocumentURI(b))
	return nil
}

// uriFromPath is URIFromPath for the operating system goos, a parameter
// so that the Windows forms are tested everywhere. Every system but
// Windows separates with /, so that branch needs no path/filepath.
func uriFromPath(goos, path string) DocumentURI {
	if goos == "windows" {
		return DocumentURI(winpath.ToURI(path))
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return DocumentURI((&url.URL{Scheme: "file", Path: path}).String())
}

// uriPath is Path for the operating system goos.
func uriPath(goos string, u DocumentURI) (string, error) {
	if goos == "windows" {
		// file:///c%3A/…, file:///C:/…, file://server/share/…: see winpath.
		p, err := winpath.FromURI(string(u))
		if err != nil {
			return "", fmt.Errorf("document URI %q: %w", u, err)
		}
		return p, nil
	}
	if p, ok := plainFileURI(u); ok {
		return p, nil
	}
	parsed, err := url.Parse(string(u))
	if err != nil {
		return "", fmt.Errorf("document URI %q: %w", u, err)
	}
	if parsed.Scheme != "file" {
		return "", fmt.Errorf("document URI %q is not a file:// URI", u)
	}
	return parsed.Path, nil
}

// canonicalURI is the URI uriFromPath makes for the file u names, or u
// itself when it names no absolute local path (another scheme, another
// host, an opaque file:x).
func canonicalURI(goos string, u DocumentURI) DocumentURI {
	if _, ok := plainFileURI(u); ok && goos != "windows" {
		return u
	}
	if goos != "windows" {
		parsed, err := url.Parse(string(u))
		if err != nil || parsed.Scheme != "file" || parsed.Host != "" && parsed.Host != "localhost" || !strings.HasPrefix(parsed.Path, "/") {
			return u
		}
	}
	p, err := uriPath(goos, u)
	if err != nil {
		return u
	}
	return uriFromPath(goos, p)
}

// plainFileURI is the path of a file:/// URI that escapes nothing and
// needs no escape (letters, digits and -_.~$&+,/:;=@ after the prefix):
// it is in URIFromPath's spelling already, and its path is what follows
// file://. Most URIs servers send are such, and a workspace symbol search
// decodes a hundred of them (three URL parses each otherwise).
func plainFileURI(u DocumentURI) (string, bool) {
	rest, ok := strings.CutPrefix(string(u), "file:///")
	if !ok {
		return "", false
	}
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.~$&+,/:;=@", c) >= 0:
		default:
			return "", false
		}
	}
	return string(u)[len("file://"):], true
}
