package store

import (
	"crypto/subtle"
	"net"
	"sync"
	"time"
)

// tokenListener hands out only the connections whose first line is the
// token. Each new connection's token is read in a goroutine of its own,
// so a client that connects and sends nothing holds up no one but itself
// (for wait at most). At most maxPending connections are being read at
// once: while that many are, the listener accepts no more, and new ones
// wait in the system's backlog, so a flood of silent connections costs a
// bounded number of goroutines and handles. The Windows owner uses it
// (owner_windows.go); it is written for any net.Listener so that it is
// tested everywhere.
type tokenListener struct {
	ln    net.Listener
	token []byte
	wait  time.Duration

	ready   chan net.Conn // connections that sent the token, for Accept
	slots   chan struct{} // one per connection whose token is being read
	done    chan struct{} // closed by Close
	stopped chan struct{} // closed when the accept loop ends
	err     error         // why the accept loop ended; set before stopped closes
	once    sync.Once
	wg      sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	pending map[net.Conn]struct{} // closed by Close, so their reads end
}

// newTokenListener serves ln until Close, which also closes ln.
func newTokenListener(ln net.Listener, token string, wait time.Duration, maxPending int) *tokenListener {
	l := &tokenListener{
		ln: ln, token: []byte(token), wait: wait,
		ready: make(chan net.Conn), slots: make(chan struct{}, maxPending),
		done: make(chan struct{}), stopped: make(chan struct{}),
		pending: map[net.Conn]struct{}{},
	}
	l.wg.Add(1)
	go l.accept()
	return l
}

// Accept returns the next connection that sent the token, the token line
// already read from it.
func (l *tokenListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		select {
		case <-l.done: // Close won the race: the caller is no longer serving
			c.Close()
			return nil, l.closedErr()
		default:
			return c, nil
		}
	case <-l.done:
		return nil, l.closedErr()
	case <-l.stopped:
		return nil, l.err
	}
}

func (l *tokenListener) closedErr() error {
	return &net.OpError{Op: "accept", Net: l.ln.Addr().Network(), Addr: l.ln.Addr(), Err: net.ErrClosed}
}

// Close stops accepting, closes the connections not yet handed out and
// waits for the goroutines that read them.
func (l *tokenListener) Close() error {
	l.once.Do(func() { close(l.done) })
	err := l.ln.Close()
	l.mu.Lock()
	l.closed = true
	for c := range l.pending {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	return err
}

func (l *tokenListener) Addr() net.Addr { return l.ln.Addr() }

func (l *tokenListener) accept() {
	defer l.wg.Done()
	defer close(l.stopped)
	for {
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			l.err = l.closedErr()
			return
		}
		c, err := l.ln.Accept()
		if err != nil {
			<-l.slots
			l.err = err
			return
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			c.Close()
			<-l.slots
			continue // the next round sees done
		}
		l.pending[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go l.check(c)
	}
}

// check reads c's token and hands c to Accept if it is right. The slot is
// given back only once c is handed out or closed.
func (l *tokenListener) check(c net.Conn) {
	defer l.wg.Done()
	defer func() { <-l.slots }()
	ok := checkToken(c, l.token, l.wait)
	l.mu.Lock()
	delete(l.pending, c)
	closed := l.closed
	l.mu.Unlock()
	if !ok || closed {
		c.Close()
		return
	}
	select {
	case l.ready <- c:
	case <-l.done:
		c.Close()
	}
}

// checkToken reads the token line a client sends first, byte by byte so
// that nothing after it is consumed, giving up after wait.
func checkToken(c net.Conn, token []byte, wait time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(wait))
	defer c.SetReadDeadline(time.Time{})
	got := make([]byte, 0, len(token)+1)
	b := make([]byte, 1)
	for len(got) <= len(token) {
		if _, err := c.Read(b); err != nil {
			return false
		}
		if b[0] == '\n' {
			break
		}
		got = append(got, b[0])
	}
	return subtle.ConstantTimeCompare(got, token) == 1
}
