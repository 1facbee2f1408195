//go:build unix

package checkpoint_test

import (
	"syscall"
	"time"
)

// cpuNow is the processor time this process and its waited-for children
// (the git processes) used so far: a figure steadier than wall time on a
// loaded machine.
func cpuNow() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	var d time.Duration
	for _, ru := range []*syscall.Rusage{&self, &kids} {
		d += time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
	}
	return d
}
