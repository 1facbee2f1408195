package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// mapSegment gives the new segment f its size on disk and maps it for
// writing (see journal); nil, nil when the filesystem cannot preallocate,
// for the records to be written with write(2). The pages are faulted in
// for writing now (the segment is made in the background), not by the
// records' copies.
func mapSegment(f *os.File, size int64) ([]byte, error) {
	size = (size + 4095) &^ 4095
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
			return nil, nil
		}
		return nil, &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		// Written with write(2) from its start: nothing was written yet.
		if err := f.Truncate(0); err != nil {
			return nil, err
		}
		return nil, nil
	}
	// Before Linux 5.14 it is not known, and the copies fault the pages in.
	unix.Madvise(m, unix.MADV_POPULATE_WRITE)
	return m, nil
}

func unmapSegment(m []byte) error { return unix.Munmap(m) }

// zeroSegment makes the first size bytes of f zeros without writing them
// (the filesystem marks its blocks unwritten, keeping them allocated).
func zeroSegment(f *os.File, size int64) error {
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_ZERO_RANGE, 0, size); err != nil {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	return nil
}
