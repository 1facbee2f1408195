//go:build unix

package store

import "golang.org/x/sys/unix"

// freeSpace is the space an unprivileged writer may still use on the
// filesystem holding dir.
func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
