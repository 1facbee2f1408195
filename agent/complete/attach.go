package complete

import (
	"fmt"
	"path/filepath"

	"github.com/darman-dev/darman/internal/fsafe"
)

// Attachable checks that path, a file or folder the user attached to a
// prompt (darman.prompt's references, an ACP client's resource and
// resource_link blocks), may go to the model as context: inside the
// workspace root, its real location too (symlinks resolved), and not a
// secret (Secret). It returns the path as the model sees it (slash,
// relative to root), or an error that says why not. Every front checks
// its attachments here, so that they refuse the same things.
func Attachable(root, path string) (string, error) {
	path = filepath.Clean(path)
	if root == "" {
		return "", fmt.Errorf("darman has no workspace folder to attach %s from", path)
	}
	root = filepath.Clean(root)
	real, err := fsafe.Resolve(path)
	if err != nil {
		return "", err
	}
	realRoot, err := fsafe.Resolve(root)
	if err != nil {
		return "", err
	}
	if !fsafe.Within(root, path) || !fsafe.Within(realRoot, real) {
		return "", fmt.Errorf("%s is outside the workspace %s: darman attaches only the workspace's files (the model may still read others with its tools, asking first)", path, root)
	}
	rel, _ := filepath.Rel(root, path)
	rel = filepath.ToSlash(rel)
	if err := NotSecret(rel); err != nil {
		return "", err
	}
	// A link inside the workspace to a secret inside it (notes.txt ->
	// .env) is that secret.
	if realRel, err := filepath.Rel(realRoot, real); err == nil {
		if err := NotSecret(filepath.ToSlash(realRel)); err != nil {
			return "", fmt.Errorf("%s leads to %w", rel, err)
		}
	}
	return rel, nil
}

// NotSecret is nil unless the slash path rel (relative to the workspace)
// is a Secret; then it is the error that says so, the words every front
// uses when it refuses to attach one.
func NotSecret(rel string) error {
	if Secret(rel) {
		return fmt.Errorf("%s looks like a secret (a key, credentials, an .env file): darman does not send it to the model as context", rel)
	}
	return nil
}
