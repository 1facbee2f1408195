package lsp

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// URIFromPath makes a file:// URI from an absolute path.
func URIFromPath(path string) DocumentURI {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path, C:/x → /C:/x
	}
	return DocumentURI((&url.URL{Scheme: "file", Path: p}).String())
}

// Path returns the absolute file path a file:// URI names.
func (u DocumentURI) Path() (string, error) {
	parsed, err := url.Parse(string(u))
	if err != nil {
		return "", fmt.Errorf("document URI %q: %w", u, err)
	}
	if parsed.Scheme != "file" {
		return "", fmt.Errorf("document URI %q is not a file:// URI", u)
	}
	p := parsed.Path
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // /C:/x → C:/x
	}
	return filepath.FromSlash(p), nil
}
