//go:build !unix && !windows

package checkpoint

import "os"

// tryLockFile takes no lock on the systems Go builds for that have neither
// flock nor LockFileEx (plan9, js/wasm, wasip1): the process's own lock
// (shadow.mu) still serializes its snapshots there.
func tryLockFile(*os.File) (busy bool, err error) { return false, nil }

func unlockFile(*os.File) {}
