//go:build linux

package childenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// The initial environment block is the memory, at the top of the main
// thread's stack, where the kernel copied the environment at execve. It is
// what /proc/PID/environ shows (the kernel reads the range env_start to
// env_end of /proc/PID/stat), to any process with ptrace read access to
// darman: a command running as root has that over a darman of root's
// whatever the sandbox does. Filtering the children's environment does not
// take the keys out of it.
//
// Go copies the block at start: runtime.goenvs makes a copy of each
// string (gostring, not gostringnocopy) before any package is initialized,
// syscall's environment and so os.Environ, os.Getenv and os/exec are
// copies of that, and nothing in Go reads the block again (the runtime's
// early GODEBUG lookup does, before goenvs, and GODEBUG is never wiped).
// With cgo, C's environ points into the block, and C's getenv of a wiped
// variable finds it empty. So the block can be overwritten in place and
// darman still has every variable.

// wipe overwrites, in this process's initial environment block, the value
// of every NAME=value entry for which drop says so, with NUL bytes: the
// name stays (a reader sees NAME= followed by empty entries), the value is
// gone. It returns the names wiped, in the block's order.
func wipe(drop func(name, value string) bool) ([]string, error) {
	start, end, err := envBounds()
	if err != nil {
		return nil, err
	}
	if end <= start {
		return nil, nil
	}
	block := make([]byte, end-start)
	if err := selfMem(start, block, false); err != nil {
		return nil, fmt.Errorf("read the environment block: %w", err)
	}
	var names []string
	for off := 0; off < len(block); {
		n := bytes.IndexByte(block[off:], 0)
		if n < 0 {
			n = len(block) - off
		}
		name, value, ok := bytes.Cut(block[off:off+n], []byte("="))
		if ok && len(name) > 0 && len(value) > 0 && drop(string(name), string(value)) {
			at := start + uint64(off+len(name)+1)
			if err := selfMem(at, make([]byte, len(value)), true); err != nil {
				return names, fmt.Errorf("wipe %s in the environment block: %w", name, err)
			}
			names = append(names, string(name))
		}
		off += n + 1
	}
	return names, nil
}

// envBounds returns env_start and env_end of /proc/self/stat, fields 50
// and 51 (see proc(5)).
func envBounds() (start, end uint64, err error) {
	// A plain read: os.ReadFile would register the file with the poller
	// first, at every start that has a secret to wipe.
	fd, err := unix.Open("/proc/self/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/self/stat: %w", err)
	}
	buf := make([]byte, 4096) // 52 numbers and a command name of at most 16 bytes
	n, err := unix.Read(fd, buf)
	unix.Close(fd)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/self/stat: %w", err)
	}
	stat := buf[:max(n, 0)]
	// "pid (comm) state ...": comm may hold anything, so the fields are
	// counted from after its last ')', where field 3 is.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, errors.New("/proc/self/stat: no command name")
	}
	f := bytes.Fields(stat[i+1:])
	const envStart = 50 - 3
	if len(f) <= envStart+1 {
		return 0, 0, errors.New("/proc/self/stat: the kernel shows no environment bounds")
	}
	if start, err = strconv.ParseUint(string(f[envStart]), 10, 64); err == nil {
		end, err = strconv.ParseUint(string(f[envStart+1]), 10, 64)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/self/stat: %w", err)
	}
	return start, end, nil
}

// selfMem reads (or, with write, writes) b at address at of this process,
// with process_vm_readv/writev on itself, which needs no access to /proc
// (a non-dumpable darman's /proc/self/mem is root's) and no pointer made
// from an address: the kernel copies. Where those calls are refused (a
// container's seccomp profile), it falls back to /proc/self/mem.
func selfMem(at uint64, b []byte, write bool) error {
	local := []unix.Iovec{{Base: &b[0]}}
	local[0].SetLen(len(b))
	remote := []unix.RemoteIovec{{Base: uintptr(at), Len: len(b)}}
	var n int
	var err error
	if write {
		n, err = unix.ProcessVMWritev(os.Getpid(), local, remote, 0)
	} else {
		n, err = unix.ProcessVMReadv(os.Getpid(), local, remote, 0)
	}
	if err == nil && n == len(b) {
		return nil
	}
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
	}
	f, ferr := os.OpenFile("/proc/self/mem", flag, 0)
	if ferr != nil {
		if err == nil {
			err = fmt.Errorf("copied %d of %d bytes", n, len(b))
		}
		return errors.Join(err, ferr)
	}
	defer f.Close()
	if write {
		_, err = f.WriteAt(b, int64(at))
	} else {
		_, err = f.ReadAt(b, int64(at))
	}
	return err
}
