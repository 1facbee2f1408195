package server

import (
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
)

// uriToPath turns a file: URI into a clean absolute path. Other schemes
// (untitled:, git:, …) are not files darman can work on.
func uriToPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("%q is not a URI: %w", uri, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("%q is not a file: URI", uri)
	}
	p := u.Path
	if runtime.GOOS == "windows" {
		p = strings.TrimPrefix(p, "/")
		if u.Host != "" {
			p = `\\` + u.Host + `\` + p // UNC path
		}
	}
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q does not name an absolute path", uri)
	}
	return filepath.Clean(p), nil
}

// pathToURI turns an absolute path into a file: URI, percent-encoding what
// needs it as editors do.
func pathToURI(path string) string {
	p := filepath.ToSlash(path)
	if runtime.GOOS == "windows" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}
