package store

import (
	"encoding/gob"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
)

// The owner and its clients exchange gob-encoded frames on a Unix socket. A
// client may have many calls in flight on one connection; answers carry the
// call's number and may come back in any order.

type callFrame struct {
	N   uint64
	Req request
}

type replyFrame struct {
	N    uint64
	Resp response
	// Closing is set when the owner is shutting down and did not run the
	// call: the client takes part in the handover and sends it again.
	Closing bool
}

// errBroken means the connection to the owner broke; the call may or may not
// have run, and is safe to send again.
var errBroken = errors.New("the connection to the session store's owner broke")

// client is a connection to the owner.
type client struct {
	conn net.Conn
	wmu  sync.Mutex
	enc  *gob.Encoder

	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan replyFrame
	err     error // set once the connection broke
}

func newClient(conn net.Conn) *client {
	c := &client{conn: conn, enc: gob.NewEncoder(conn), pending: map[uint64]chan replyFrame{}}
	go c.read()
	return c
}

func (c *client) read() {
	dec := gob.NewDecoder(c.conn)
	for {
		var f replyFrame
		if err := dec.Decode(&f); err != nil {
			c.fail()
			return
		}
		c.mu.Lock()
		ch := c.pending[f.N]
		delete(c.pending, f.N)
		c.mu.Unlock()
		if ch != nil {
			ch <- f
		}
	}
}

// fail marks the connection broken and wakes every waiting call.
func (c *client) fail() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = errBroken
	}
	for n, ch := range c.pending {
		close(ch)
		delete(c.pending, n)
	}
}

// start sends a call and returns the channel its answer will come on; the
// channel is closed without an answer if the connection breaks.
func (c *client) start(req *request) (chan replyFrame, uint64, error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, 0, c.err
	}
	c.next++
	n := c.next
	ch := make(chan replyFrame, 1)
	c.pending[n] = ch
	c.mu.Unlock()

	c.wmu.Lock()
	err := c.enc.Encode(&callFrame{N: n, Req: *req})
	c.wmu.Unlock()
	if err != nil {
		c.conn.Close()
		c.fail()
		return nil, 0, errBroken
	}
	return ch, n, nil
}

// forget drops interest in call n (its caller gave up waiting).
func (c *client) forget(n uint64) {
	c.mu.Lock()
	delete(c.pending, n)
	c.mu.Unlock()
}

func (c *client) close() error { return c.conn.Close() }

// serveConn answers the calls arriving on one client connection until it
// breaks. run executes a call, or reports false when the owner is closing.
func serveConn(conn net.Conn, run func(*request) (response, bool), log *slog.Logger) {
	defer conn.Close()
	dec := gob.NewDecoder(conn)
	enc := gob.NewEncoder(conn)
	var wmu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		var f callFrame
		if err := dec.Decode(&f); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				log.Warn("dropping a session store client that sent an unreadable call", "err", err)
			}
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, ok := run(&f.Req)
			wmu.Lock()
			defer wmu.Unlock()
			enc.Encode(&replyFrame{N: f.N, Resp: resp, Closing: !ok})
		}()
	}
}
