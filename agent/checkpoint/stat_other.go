//go:build !unix

package checkpoint

import (
	"io/fs"
	"os"
	"path/filepath"
)

// statAt is the lstat of name in the directory dirPath.
func statAt(_ *os.File, dirPath, name string) (fstat, error) {
	return statPath(filepath.Join(dirPath, name))
}

// statDir is zero here: without a change time and an inode, a
// directory's stat cannot tell that its names stayed the same, so it is
// listed at every snapshot.
func statDir(*os.File) (fstat, error) { return fstat{}, nil }

// statPath is the lstat of path: its size, time and kind (the rest is not
// there to be had).
func statPath(path string) (fstat, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fstat{}, err
	}
	m := fi.Mode()
	kind := m & (fs.ModeDir | fs.ModeSymlink)
	if !m.IsRegular() && kind == 0 {
		kind = fs.ModeIrregular
	}
	return fstat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: uint32(kind | m.Perm())}, nil
}
