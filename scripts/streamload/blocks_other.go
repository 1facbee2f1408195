//go:build !unix

package main

import "os"

// allocated is the space a file takes on disk; Windows' FileInfo gives
// only the apparent size.
func allocated(info os.FileInfo) int64 { return info.Size() }
