//go:build windows

package tool

import "os"

// privateDir reports whether info (from Lstat) is a real directory, not a
// link or junction. Windows' temporary directory (%TEMP%, under the
// user's profile) is already private to the user, and Windows keeps no
// Unix permission bits to check.
func privateDir(info os.FileInfo) bool {
	return info.IsDir() && info.Mode()&(os.ModeSymlink|os.ModeIrregular) == 0
}
