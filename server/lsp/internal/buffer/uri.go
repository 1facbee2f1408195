package buffer

import (
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"

	"github.com/darman-dev/darman/internal/winpath"
)

// URIToPath turns a file: URI into a clean absolute path. Other schemes
// (untitled:, git:, …) are not files darman can work on.
func URIToPath(uri string) (string, error) {
	if runtime.GOOS == "windows" {
		// file:///c%3A/…, file:///C:/…, file://server/share/…: see winpath.
		p, err := winpath.FromURI(uri)
		if err != nil {
			return "", fmt.Errorf("%q is not a file: URI of an absolute path: %w", uri, err)
		}
		return p, nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("%q is not a URI: %w", uri, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("%q is not a file: URI", uri)
	}
	p := filepath.FromSlash(u.Path)
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q does not name an absolute path", uri)
	}
	return filepath.Clean(p), nil
}

// PathToURI turns an absolute path into a file: URI, percent-encoding what
// needs it as editors do.
func PathToURI(path string) string {
	if runtime.GOOS == "windows" {
		return winpath.ToURI(path)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}
