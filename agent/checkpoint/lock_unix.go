//go:build unix

package checkpoint

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLockFile takes flock's exclusive lock on f, or reports busy when
// another open file holds it.
func tryLockFile(f *os.File) (busy bool, err error) {
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	return errors.Is(err, unix.EWOULDBLOCK), err
}

func unlockFile(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }
