//go:build !unix

package store_test

import (
	"io/fs"
	"time"
)

// No getrusage here: BenchmarkTurn reports no CPU time.
const haveCPUTime = false

func cpuTime() time.Duration { return 0 }

// allocated is a file's size here: its holes are not known.
func allocated(info fs.FileInfo) int64 { return info.Size() }
