//go:build !unix && !windows

package checkpoint

import "context"

// lockFile does nothing on the systems Go builds for that have neither
// flock nor LockFileEx (plan9, js/wasm, wasip1): the process's own lock
// (shadow.mu) still serializes its snapshots there.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
