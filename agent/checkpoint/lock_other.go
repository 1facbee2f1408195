//go:build !unix

package checkpoint

import "context"

// lockFile does nothing where flock is missing: the process's own lock
// (shadow.mu) still serializes its snapshots.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
