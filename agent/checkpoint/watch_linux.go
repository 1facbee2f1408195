package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux the watcher is inotify: one instance per workspace, a watch on
// each directory the walk goes into (never in an ignored tree: the walk
// does not go there), added before the directory is listed, so that a
// change after the listing is an event. The events are not read as they
// come: the kernel queues them (fs.inotify.max_queued_events of them) and
// a snapshot reads them all at its start. A queue that overflowed says so
// (IN_Q_OVERFLOW), and that snapshot walks the whole tree.

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | inDontFollow | unix.IN_EXCL_UNLINK

type watcher struct {
	root string
	fd   int

	mu    sync.Mutex // add runs in the walk's goroutines
	byWD  map[int32]string
	byRel map[string]int32
	err   error // why the watcher stopped: the snapshots walk
	buf   []byte
}

func newWatcher(root string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		if errors.Is(err, unix.EMFILE) {
			return nil, fmt.Errorf("no inotify instance left (fs.inotify.max_user_instances = %s): raise it (sysctl fs.inotify.max_user_instances)", sysctl("max_user_instances"))
		}
		return nil, fmt.Errorf("inotify: %w", err)
	}
	return &watcher{root: root, fd: fd, byWD: map[int32]string{}, byRel: map[string]int32{}, buf: make([]byte, 64<<10)}, nil
}

func sysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/fs/inotify/" + name)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// add watches the directory rel. It asks the kernel each time, which
// gives back the watch a directory has (the same inode), or a new one for
// a new directory of the same name. A failure (the watch limit) stops the
// watcher: it is the walk from then on.
func (w *watcher) add(rel string) {
	w.mu.Lock()
	fd, stopped := w.fd, w.err != nil
	w.mu.Unlock()
	if stopped {
		return
	}
	path, mask := w.root, uint32(watchMask&^inDontFollow) // the workspace may be a link
	if rel != "" {
		path, mask = filepath.Join(w.root, filepath.FromSlash(rel)), watchMask
	}
	wd, err := unix.InotifyAddWatch(fd, path, mask)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err == nil:
	case rel != "" && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)):
		return // gone, or no directory now: the listing says so
	case rel != "" && errors.Is(err, unix.EACCES):
		// Unreadable: the walk cannot list it either. A change of its
		// mode is an event in its parent, which then walks it whole.
		return
	case errors.Is(err, unix.ENOSPC):
		w.err = fmt.Errorf("the inotify watch limit (fs.inotify.max_user_watches = %s) was reached at %d directories: raise it (sysctl fs.inotify.max_user_watches)", sysctl("max_user_watches"), len(w.byRel))
		return
	default:
		w.err = fmt.Errorf("inotify cannot watch %s: %w", path, err)
		return
	}
	if old, ok := w.byWD[int32(wd)]; ok && old != rel && w.byRel[old] == int32(wd) {
		delete(w.byRel, old) // the same directory by another name: it moved
	}
	w.byWD[int32(wd)] = rel
	w.byRel[rel] = int32(wd)
}

// drain reads the events queued since the last drain into ch. It reports
// false when they cannot be trusted to hold every change: the queue
// overflowed, the workspace itself went, or the watcher stopped.
func (w *watcher) drain(ch *changes) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	complete := w.err == nil
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			if err != nil && err != unix.EAGAIN {
				w.err = fmt.Errorf("inotify: %w", err)
				complete = false
			}
			return complete
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			name := ""
			if ev.Len > 0 {
				b := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				if i := strings.IndexByte(string(b), 0); i >= 0 {
					b = b[:i]
				}
				name = string(b)
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if !w.event(ev.Wd, ev.Mask, name, ch) {
				complete = false
			}
		}
	}
}

// event notes one event in ch; false: it says changes were lost.
func (w *watcher) event(wd int32, mask uint32, name string, ch *changes) bool {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		return false
	}
	rel, ok := w.byWD[wd]
	if !ok {
		return true // a watch taken away: what it saw is visited otherwise
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(w.byWD, wd)
		if w.byRel[rel] == wd {
			delete(w.byRel, rel)
		}
		return true
	}
	if mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
		if rel == "" {
			return false // the workspace itself went
		}
		ch.dirty(parentRel(rel))
		return true
	}
	ch.dirty(rel)
	if name == "" || mask&unix.IN_ISDIR == 0 {
		return true
	}
	p := join(rel, name)
	if mask&unix.IN_MOVED_FROM != 0 {
		// The watches beneath go: their names are wrong now. Where it
		// went, if inside, is a new name there, walked whole. (A deleted
		// directory's watch goes by itself: IN_IGNORED.)
		for r, d := range w.byRel {
			if r == p || strings.HasPrefix(r, p+"/") {
				unix.InotifyRmWatch(w.fd, uint32(d))
				delete(w.byRel, r)
				delete(w.byWD, d)
			}
		}
	}
	if mask&(unix.IN_MOVED_TO|unix.IN_CREATE|unix.IN_ATTRIB) != 0 {
		ch.deep[p] = true // new, or maybe readable now: walked whole
	}
	return true
}

// failure is why the watcher stopped, nil while it works.
func (w *watcher) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// reset forgets every watch (after changes were lost, their names may be
// wrong): the walk that follows adds them again.
func (w *watcher) reset() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		w.err = fmt.Errorf("inotify: %w", err)
		return w.err
	}
	unix.Close(w.fd)
	w.fd, w.byWD, w.byRel = fd, map[int32]string{}, map[string]int32{}
	return nil
}

// watched is how many directories are watched.
func (w *watcher) watched() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byRel)
}

func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
	if w.err == nil {
		w.err = errors.New("closed")
	}
}

const watcherKind = "inotify"

// inDontFollow is IN_DONTFOLLOW (<sys/inotify.h>), which x/sys/unix does
// not name: a link to a directory is not watched through.
const inDontFollow = 0x2000000

// WatchSupport names the file watcher snapshots use on this system and
// its limit, or says why there is none (each snapshot then walks).
func WatchSupport() (string, error) {
	w, err := newWatcher("")
	if err != nil {
		return "", err
	}
	w.close()
	return fmt.Sprintf("inotify, one watch per directory (fs.inotify.max_user_watches = %s)", sysctl("max_user_watches")), nil
}
