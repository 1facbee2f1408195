//go:build !unix

package search

import (
	"os"
	"time"
)

// modTimeAt is the modification time of abs (the file name in the open
// directory dir); the zero time if it cannot be stat'ed.
func modTimeAt(dir *os.File, name, abs string) time.Time {
	info, err := os.Lstat(abs)
	if err != nil {
		return time.Time{}
	}
	return info.ModTime()
}
