//go:build unix

package checkpoint

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// statAt is the lstat of name in the open directory dir (at path dirPath):
// relative to the directory's descriptor, so the kernel does not walk the
// whole path again for each of its files.
func statAt(dir *os.File, dirPath, name string) (fstat, error) {
	var st unix.Stat_t
	err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	for err == unix.EINTR {
		err = unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return fstat{}, &fs.PathError{Op: "lstat", Path: dirPath + "/" + name, Err: err}
	}
	return fstatOf(&st), nil
}

// statDir is the stat of the open directory dir.
func statDir(dir *os.File) (fstat, error) {
	var st unix.Stat_t
	err := unix.Fstat(int(dir.Fd()), &st)
	for err == unix.EINTR {
		err = unix.Fstat(int(dir.Fd()), &st)
	}
	if err != nil {
		return fstat{}, err
	}
	return fstatOf(&st), nil
}

// statPath is the lstat of path.
func statPath(path string) (fstat, error) {
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	for err == unix.EINTR {
		err = unix.Lstat(path, &st)
	}
	if err != nil {
		return fstat{}, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return fstatOf(&st), nil
}

func fstatOf(st *unix.Stat_t) fstat {
	m := uint32(st.Mode)
	fm := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		fm |= fs.ModeDir
	case unix.S_IFLNK:
		fm |= fs.ModeSymlink
	default:
		fm |= fs.ModeIrregular
	}
	return fstat{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: uint64(st.Ino), mode: uint32(fm)}
}
