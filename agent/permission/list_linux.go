package permission

import (
	"encoding/binary"
	"io/fs"
	"syscall"
)

// lstatType returns the type bits of the file at p, not following a
// final link, as os.Lstat's Mode().Type() would, without building a
// FileInfo.
func lstatType(p string) (fs.FileMode, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(p, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		break
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0, nil
	case syscall.S_IFDIR:
		return fs.ModeDir, nil
	case syscall.S_IFLNK:
		return fs.ModeSymlink, nil
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe, nil
	case syscall.S_IFSOCK:
		return fs.ModeSocket, nil
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice, nil
	case syscall.S_IFBLK:
		return fs.ModeDevice, nil
	}
	return fs.ModeIrregular, nil
}

// The layout of struct linux_dirent64: d_ino, d_off, d_reclen, d_type,
// then the name, NUL-terminated.
const (
	direntIno    = 0
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// parseDirents adds the entries in buf, as getdents64 fills it, to names
// with the type each has (see direntMode): the type comes with the name,
// so an entry needs no lstat of its own to tell a link from a file. It
// leaves out "." and ".." and deleted entries as syscall.ParseDirent
// does, and reports false when buf is malformed.
func parseDirents(buf []byte, names map[string]fs.FileMode) bool {
	for len(buf) > 0 {
		if len(buf) < direntName {
			return false
		}
		reclen := int(binary.NativeEndian.Uint16(buf[direntReclen:]))
		if reclen < direntName || reclen > len(buf) {
			return false
		}
		rec := buf[:reclen]
		buf = buf[reclen:]
		if binary.NativeEndian.Uint64(rec[direntIno:]) == 0 {
			continue
		}
		name := rec[direntName:]
		for i, b := range name {
			if b == 0 {
				name = name[:i]
				break
			}
		}
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		names[string(name)] = direntMode(rec[direntType])
	}
	return true
}

// direntMode turns a d_type into the type bits of a file mode;
// typeUnknown when the file system did not say (DT_UNKNOWN).
func direntMode(t byte) fs.FileMode {
	switch t {
	case syscall.DT_REG:
		return 0
	case syscall.DT_DIR:
		return fs.ModeDir
	case syscall.DT_LNK:
		return fs.ModeSymlink
	case syscall.DT_FIFO:
		return fs.ModeNamedPipe
	case syscall.DT_SOCK:
		return fs.ModeSocket
	case syscall.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.DT_BLK:
		return fs.ModeDevice
	}
	return typeUnknown
}
