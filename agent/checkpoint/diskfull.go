package checkpoint

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// ErrDiskFull is returned (wrapped, with syscall.ENOSPC) when a snapshot
// does not fit on the disk holding the shadow repositories. Nothing of the
// snapshot is kept (git writes objects and the index through temporary
// files it renames); earlier checkpoints are, and snapshots work again
// once space is freed.
var ErrDiskFull = errors.New("disk full")

type diskFullError struct{ err error }

func (e *diskFullError) Error() string {
	return fmt.Sprintf("disk full: the workspace's checkpoint does not fit on the disk (%v). "+
		"Free some space and try again: earlier checkpoints are kept", e.err)
}

func (e *diskFullError) Unwrap() []error { return []error{ErrDiskFull, syscall.ENOSPC, e.err} }

// diskFull says "disk full" of an error of writing a shadow repository
// that is one: a system call's ENOSPC, or git's own words for it (git
// runs with LC_ALL=C).
func diskFull(err error) error {
	if err == nil || errors.Is(err, ErrDiskFull) {
		return err
	}
	if errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "No space left on device") {
		return &diskFullError{err: err}
	}
	return err
}
