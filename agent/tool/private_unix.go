//go:build unix

package tool

import (
	"os"
	"syscall"
)

// privateDir reports whether info (from Lstat) is a directory only this
// user can enter: not a link, no access for group or others, owned by us.
func privateDir(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return info.IsDir() && info.Mode().Perm()&0o077 == 0 && (!ok || int(st.Uid) == os.Getuid())
}
