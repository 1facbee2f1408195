//go:build unix

package store

import (
	"os"
	"syscall"
)

// diskUsage is the space a file takes on disk. Badger preallocates its
// active value-log file sparsely, so the apparent size overstates it.
func diskUsage(info os.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}
