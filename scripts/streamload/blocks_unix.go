//go:build unix

package main

import (
	"os"
	"syscall"
)

// allocated is the space a file takes on disk, as du counts it.
func allocated(info os.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}
