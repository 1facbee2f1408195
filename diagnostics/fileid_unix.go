//go:build linux || darwin

package diagnostics

import (
	"os"
	"syscall"
)

// fileIDOf is what tells a file's content changed without reading it:
// its device and inode, size, and modification and change times (the
// kernel sets the change time on every write, and no one can set it
// back).
func fileIDOf(path string) (fileID, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size,
		mtime: fi.ModTime().UnixNano(), ctime: changeTime(st)}, true
}
