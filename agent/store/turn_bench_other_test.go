//go:build !unix

package store_test

import (
	"io/fs"
	"time"
)

// cpuTime is not measured here (the benchmark reports 0 CPU time).
func cpuTime() time.Duration { return 0 }

// allocated is a file's size here: its blocks are not known.
func allocated(info fs.FileInfo) int64 { return info.Size() }
