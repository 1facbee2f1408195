//go:build unix

package tool_test

import (
	"syscall"
	"time"
)

// cpuTime is the user and system time of this process and its waited-for
// children so far.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	total := time.Duration(0)
	for _, ru := range []syscall.Rusage{self, children} {
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}
