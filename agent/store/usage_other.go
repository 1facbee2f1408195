//go:build !unix

package store

import "os"

// diskUsage is the space a file takes on disk, as far as this system tells.
func diskUsage(info os.FileInfo) int64 { return info.Size() }
