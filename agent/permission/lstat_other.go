//go:build !linux

package permission

import (
	"io/fs"
	"os"
)

// lstatType returns the type bits of the file at p, not following a
// final link.
func lstatType(p string) (fs.FileMode, error) {
	info, err := os.Lstat(p)
	if err != nil {
		return 0, err
	}
	return info.Mode().Type(), nil
}
