//go:build unix

package permission

import (
	"io/fs"
	"sync"
	"syscall"
)

// direntBufs keeps the buffers directories are read into: one on the
// stack would be cleared on every listing.
var direntBufs = sync.Pool{New: func() any { return new([8 << 10]byte) }}

// listNames returns the names in dir with their types where the system
// gives them (see parseDirents), nil when it holds more than max or cannot
// be read. It reads the directory with plain system calls: os.Open would
// register the descriptor with the poller, which costs more than reading a
// small directory does.
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
