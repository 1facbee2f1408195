package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// A walk cancelled while it lists a big directory stops within it: the
// files after the cancel are not handed on (grep would read each), and the
// walk gives the context's error.
func TestWalkStopsInsideADirectoryWhenCancelled(t *testing.T) {
	root := t.TempDir()
	const files = 3000
	for i := range files {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%04d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	err := walkFiles(ctx, root, root, func(int, walkFile) error {
		if calls.Add(1) == 1 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("walk after cancel: %v", err)
	}
	if n := calls.Load(); n > walkCheckEvery+1 {
		t.Errorf("%d of %d files handed on after the walk was cancelled at the first", n-1, files-1)
	}
}
