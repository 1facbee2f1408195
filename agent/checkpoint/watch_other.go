//go:build !linux

package checkpoint

import (
	"errors"
	"runtime"
)

// Elsewhere than on Linux there is no watcher yet: every snapshot walks
// the tree (what it does on Linux when the watcher cannot be set up).
type watcher struct{}

func newWatcher(root string) (*watcher, error) {
	return nil, errors.New("no file watcher on " + runtime.GOOS + " yet")
}

func (w *watcher) add(rel string)         {}
func (w *watcher) drain(ch *changes) bool { return false }
func (w *watcher) failure() error         { return errors.New("no file watcher on " + runtime.GOOS + " yet") }
func (w *watcher) reset() error           { return w.failure() }
func (w *watcher) watched() int           { return 0 }
func (w *watcher) close()                 {}

const watcherKind = ""

// WatchSupport says there is no file watcher here: each snapshot walks.
func WatchSupport() (string, error) { return "", (&watcher{}).failure() }
