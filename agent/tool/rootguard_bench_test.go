package tool

import "testing"

// BenchmarkAbsentRootNames is what the look at the workspace root's
// protected names costs each sandboxed command, twice (before and after).
func BenchmarkAbsentRootNames(b *testing.B) {
	root := b.TempDir()
	for b.Loop() {
		if len(absentRootNames(root)) == 0 {
			b.Fatal("no protected name is missing from an empty folder")
		}
	}
}
