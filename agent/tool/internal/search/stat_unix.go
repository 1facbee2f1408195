//go:build unix

package search

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// modTimeAt is the modification time of the file name in the open
// directory dir (whose path and name make abs), looked up from the
// directory: the kernel resolves one name, not every directory of abs.
func modTimeAt(dir *os.File, name, abs string) time.Time {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return time.Time{}
		}
		return time.Unix(st.Mtim.Unix())
	}
}
