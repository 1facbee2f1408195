//go:build linux

package testenv

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// PTY opens a new pseudo-terminal and returns its slave side, to be made a
// process's controlling terminal (SysProcAttr Setsid, Setctty, Ctty with
// the slave as that fd), and a count of the bytes waiting in its input
// queue, which is what a program typing into the terminal with TIOCSTI
// fills. Both sides are closed with the test; it skips where there is no
// /dev/ptmx.
func PTY(t testing.TB) (slave *os.File, queued func() int) {
	t.Helper()
	_, slave, queued = PTYPair(t)
	return slave, queued
}

// PTYPair is PTY with the master side too, through which a test types
// what the user would (its writes are the terminal's input) and reads
// what was written to the terminal.
func PTYPair(t testing.TB) (master, slave *os.File, queued func() int) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave, func() int {
		var q int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, slave.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&q))); e != 0 {
			t.Fatal(e)
		}
		return int(q)
	}
}
