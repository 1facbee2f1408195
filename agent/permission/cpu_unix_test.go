//go:build unix

package permission

import (
	"syscall"
	"testing"
	"time"
)

// cpuClock measures the CPU time the process spends (user and system),
// reported per operation beside the wall time: on a shared machine the
// wall time counts the waits for a core, the CPU time does not.
type cpuClock struct{ start time.Duration }

func startCPU() cpuClock { return cpuClock{processCPU()} }

func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(processCPU()-c.start)/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
