//go:build unix && !linux

package permission

import (
	"io/fs"
	"os"
	"syscall"
)

// listNames returns the names in dir, each with typeUnknown, nil when it
// holds more than max or cannot be read. It reads the directory with plain
// system calls: os.Open would register the descriptor with the poller,
// which costs more than reading a small directory does.
func listNames(dir string, max int) map[string]fs.FileMode {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	var buf [8 << 10]byte
	names := map[string]fs.FileMode{}
	var list []string
	for {
		n, err := syscall.ReadDirent(fd, buf[:])
		if err != nil {
			return nil
		}
		if n <= 0 {
			return names
		}
		_, _, list = syscall.ParseDirent(buf[:n], -1, list[:0])
		for _, name := range list {
			names[name] = typeUnknown
		}
		if len(names) > max {
			return nil
		}
	}
}

// lstatType returns the type bits of the file at p, not following a
// final link.
func lstatType(p string) (fs.FileMode, error) {
	info, err := os.Lstat(p)
	if err != nil {
		return 0, err
	}
	return info.Mode().Type(), nil
}
