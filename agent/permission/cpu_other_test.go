//go:build !unix

package permission

import "testing"

// cpuClock reports nothing where the process's CPU time is not at hand.
type cpuClock struct{}

func startCPU() cpuClock { return cpuClock{} }

func (cpuClock) report(*testing.B) {}
