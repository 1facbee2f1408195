package store

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A client that connects and sends nothing does not hold up one that
// sends the token; a wrong token is closed; whatever follows the token
// is left for the server; Close ends the silent connection too.
func TestSilentConnectionDoesNotDelayOthers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newTokenListener(ln, "secret", time.Hour, 4)
	defer l.Close()
	dial := func(send string) net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if send != "" {
			if _, err := c.Write([]byte(send)); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	silent := dial("")
	wrong := dial("guess\n")
	dial("secret\nhello")

	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	var c net.Conn
	select {
	case c = <-accepted:
	case <-time.After(time.Minute):
		t.Fatal("Accept waited for the connection that sent nothing")
	}
	if c == nil {
		t.Fatal("Accept failed")
	}
	defer c.Close()
	got := make([]byte, 5)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "hello" {
		t.Errorf("what followed the token: %q, %v", got, err)
	}
	if n, err := wrong.Read(make([]byte, 1)); err == nil {
		t.Errorf("the connection with a wrong token was served: read %d bytes", n)
	}

	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if n, err := silent.Read(make([]byte, 1)); err == nil {
		t.Errorf("the silent connection outlived Close: read %d bytes", n)
	}
	if c, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, %v", c, err)
	}
}

// At most maxPending connections are read at once; the next waits in the
// backlog until one of them is done, by hanging up or by running out of
// time.
func TestUncheckedConnectionsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const wait = 5 * time.Second
		pl := newPipeListener()
		l := newTokenListener(pl, "secret", wait, 2)
		defer l.Close()
		a, b, c := pl.dial(), pl.dial(), pl.dial()
		defer a.Close()
		defer b.Close()
		defer c.Close()
		go c.Write([]byte("secret\nhello"))
		accepted := make(chan net.Conn, 1)
		go func() {
			conn, _ := l.Accept()
			accepted <- conn
		}()
		synctest.Wait()
		l.mu.Lock()
		n := len(l.pending)
		l.mu.Unlock()
		if n != 2 || len(accepted) != 0 {
			t.Fatalf("with two silent connections and a limit of two: %d being read, %d accepted; want 2, 0", n, len(accepted))
		}

		a.Close()
		conn := <-accepted
		if conn == nil {
			t.Fatal("Accept failed once a silent connection hung up")
		}
		got := make([]byte, 5)
		if _, err := io.ReadFull(conn, got); err != nil || string(got) != "hello" {
			t.Errorf("the accepted connection read %q, %v; want the good client's hello", got, err)
		}
		conn.Close()

		start := time.Now()
		if _, err := b.Read(make([]byte, 1)); err == nil {
			t.Error("the other silent connection was served")
		}
		if d := time.Since(start); d != wait {
			t.Errorf("the silent connection was closed after %v, want %v", d, wait)
		}
	})
}

// pipeListener is a net.Listener over net.Pipe, so that synctest can see
// every goroutine block; conns is the backlog.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn, 8), done: make(chan struct{})}
}

func (p *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	p.conns <- server
	return client
}

func (p *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

func (p *pipeListener) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

func (p *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
