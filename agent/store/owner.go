package store

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"time"
)

// owner is this process's ownership of the database: the lock, badger, the
// socket it serves other processes on, and the background collector.
type owner struct {
	local *local
	lock  *os.File
	ln    net.Listener
	log   *slog.Logger

	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	// calls is held shared by each call served to another process, so that
	// close waits for them before it closes badger.
	calls sync.RWMutex
}

func startOwner(dataDir, sock string, lock *os.File, opts Options, log *slog.Logger) (*owner, error) {
	dir, err := settleLayout(dataDir)
	if err != nil {
		return nil, err
	}
	jdir := journalPath(dataDir)
	if opts.ReadOnly && runtime.GOOS != "windows" { // badger has no read-only mode on Windows
		// Read-only: nobody is served (a writer would be refused), so
		// another darman that starts meanwhile waits for the lock.
		l, err := openLocal(dir, jdir, log, readOnly)
		if err != nil {
			return nil, err
		}
		return &owner{local: l, lock: lock, log: log, stop: make(chan struct{}), conns: map[net.Conn]struct{}{}}, nil
	}
	l, err := openLocal(dir, jdir, log, readWrite)
	if err != nil {
		return nil, err
	}
	ln, err := listenOwner(sock)
	if err != nil {
		l.close()
		return nil, err
	}
	o := &owner{local: l, lock: lock, ln: ln, log: log, stop: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	o.wg.Add(1)
	go o.serve()
	if opts.GCInterval > 0 {
		o.wg.Add(1)
		go o.collect(opts.GCInterval)
	}
	return o, nil
}

func (o *owner) serve() {
	defer o.wg.Done()
	for {
		conn, err := o.ln.Accept()
		if err != nil {
			return
		}
		o.mu.Lock()
		o.conns[conn] = struct{}{}
		o.mu.Unlock()
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			serveConn(conn, o.run, o.log)
			o.mu.Lock()
			delete(o.conns, conn)
			o.mu.Unlock()
		}()
	}
}

func (o *owner) collect(every time.Duration) {
	defer o.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-t.C:
			if err := o.local.gc(); err != nil {
				o.log.Warn("value log garbage collection failed", "err", err)
			}
		}
	}
}

// close stops serving, waits for calls in flight, closes badger and only
// then releases the lock, so the next owner never finds badger open.
func (o *owner) close() error {
	close(o.stop)
	if o.ln != nil {
		o.ln.Close()
	}
	// Wait for the calls already running; any later one sees o.stop closed
	// and leaves badger alone.
	o.calls.Lock()
	o.calls.Unlock()
	o.mu.Lock()
	for c := range o.conns {
		c.Close()
	}
	o.mu.Unlock()
	o.wg.Wait()
	err := o.local.close()
	if errors.Is(err, errCloseGaveUp) {
		// badger still holds the directory: the owner's lock stays with
		// this process, which is stopping, so that no other darman opens
		// the store under it.
		return err
	}
	if uerr := unlock(o.lock); err == nil {
		err = uerr
	}
	return err
}

// run executes a call for another darman process; it reports false, and
// leaves badger alone, once the owner is closing.
func (o *owner) run(req *request) (response, bool) {
	o.calls.RLock()
	defer o.calls.RUnlock()
	select {
	case <-o.stop:
		return response{}, false
	default:
	}
	return o.local.do(req), true
}
