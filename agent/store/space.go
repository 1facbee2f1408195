package store

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/dustin/go-humanize"
)

// ErrDiskFull is returned (wrapped) when a write does not fit on the disk
// that holds the session store. Nothing of that write is kept; earlier
// writes are, and writing works again once space is freed.
var ErrDiskFull = errors.New("disk full")

// diskFull says "disk full" of an error that is one.
func diskFull(err error) error {
	if err != nil && errors.Is(err, syscall.ENOSPC) && !errors.Is(err, ErrDiskFull) {
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	return err
}

// writeReserve is the free space a write must leave: badger flushes a full
// memtable to a table of about its size, and a flush that fails is retried
// for ever while writes wait, which a turn would see as darman hanging.
const writeReserve = memTableSize + 1<<20

// roomSlack is how many bytes may be written between two looks at the free
// space (see room).
const roomSlack = 256 << 10

// room refuses a write of about n bytes when the disk holding the store
// could not take it. Badger writes its log through memory-mapped files:
// on a full disk a write to one is not an error but a SIGBUS that kills
// darman, so the space is looked for before badger writes. The write is
// counted twice (badger's log and the journal).
//
// The filesystem is asked once per roomSlack bytes written: a check that
// found room for the write, the reserve and roomSlack more lets the writes
// after it through without asking again until roomSlack is used up.
func (l *local) room(n int) error {
	if l.sinceRoom.Add(int64(2*n)) < roomSlack {
		return nil
	}
	free, ok := freeSpace(l.dir)
	if !ok {
		return nil
	}
	need := int64(2*n) + writeReserve
	if free >= need+roomSlack {
		l.sinceRoom.Store(0)
		return nil
	}
	// Near the limit, every write asks.
	l.sinceRoom.Store(roomSlack)
	if free >= need {
		return nil
	}
	return fmt.Errorf("%w: the disk holding the session store %s has %s free; darman needs %s to write safely there. "+
		"Free some space and try again: the sessions written so far are kept", ErrDiskFull, l.dir,
		humanize.IBytes(uint64(max(free, 0))), humanize.IBytes(uint64(need)))
}
