package permission

import (
	"encoding/binary"
	"io/fs"
	"sync"
	"syscall"
)

// direntBufs keeps the buffers directories are read into: one on the
// stack would be cleared on every listing.
var direntBufs = sync.Pool{New: func() any { return new([8 << 10]byte) }}

// listNames returns the names in dir with the type each entry has (see
// direntType), nil when it holds more than max or cannot be read. It
// reads the directory with plain system calls: os.Open would register the
// descriptor with the poller, which costs more than reading a small
// directory does. The type comes with the name, so an entry needs no
// lstat of its own to tell a link from a file.
func listNames(dir string, max int) map[string]fs.FileMode {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	buf := direntBufs.Get().(*[8 << 10]byte)
	defer direntBufs.Put(buf)
	names := map[string]fs.FileMode{}
	for {
		n, err := syscall.ReadDirent(fd, buf[:])
		if err != nil {
			return nil
		}
		if n <= 0 {
			return names
		}
		if !parseDirents(buf[:n], names) || len(names) > max {
			return nil
		}
	}
}

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

// parseDirents adds the entries in buf, as getdents64 fills it, to names,
// leaving out "." and ".." and deleted entries as syscall.ParseDirent
// does. It reports false when buf is malformed.
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
