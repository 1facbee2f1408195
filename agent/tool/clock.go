package tool

import (
	"context"
	"sync"
	"time"
)

// Clock is the context a tool call runs under: it ends when its parent
// does, or once the call has spent its timeout — counting only the time the
// call was not waiting for a person. A permission question, or an MCP
// server's form, may stay open for minutes while someone reads a diff; that
// time is the person's, not the tool's, so the waits Pause the clock.
//
// When the timeout is spent, Err is context.DeadlineExceeded, as with
// context.WithTimeout. Deadline is the parent's: the clock's own end moves
// with every pause, so it is no deadline a connection could be given.
// The one who made the clock calls Stop once the call is over.
type Clock struct {
	parent context.Context
	done   chan struct{}
	// unhook stops watching the parent.
	unhook func() bool

	mu      sync.Mutex
	err     error
	expired bool
	timer   *time.Timer
	left    time.Duration // what remains of the timeout when it last stopped
	since   time.Time     // when it last started running
	paused  int
}

var _ context.Context = (*Clock)(nil)

// NewClock starts a clock of timeout under parent.
func NewClock(parent context.Context, timeout time.Duration) *Clock {
	c := &Clock{parent: parent, done: make(chan struct{}), left: timeout, since: time.Now()}
	// Under the lock: the timer and the parent's end may fire at once and
	// read the timer in end.
	c.mu.Lock()
	c.timer = time.AfterFunc(timeout, c.tick)
	c.mu.Unlock()
	c.unhook = context.AfterFunc(parent, func() { c.end(parent.Err(), false) })
	return c
}

// tick ends the clock when its timeout is spent; a tick that raced with a
// pause (the timer fired as it was being stopped) finds time left and waits
// for the resume.
func (c *Clock) tick() {
	c.mu.Lock()
	spent := c.paused == 0 && time.Since(c.since) >= c.left
	c.mu.Unlock()
	if spent {
		c.end(context.DeadlineExceeded, true)
	}
}

// end ends the clock with err, unless it had ended.
func (c *Clock) end(err error, expired bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err, c.expired = err, expired
	c.timer.Stop()
	close(c.done)
}

// Pause stops the clock until resume is called: for as long as the call
// waits for a person. Pauses nest; the clock runs again when every pause
// has resumed. Calling resume more than once is harmless.
func (c *Clock) Pause() (resume func()) {
	c.mu.Lock()
	if c.paused == 0 && c.err == nil {
		c.timer.Stop()
		c.left -= time.Since(c.since)
	}
	c.paused++
	c.mu.Unlock()
	var once sync.Once
	return func() { once.Do(c.resume) }
}

func (c *Clock) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused--
	if c.paused == 0 && c.err == nil {
		c.since = time.Now()
		c.timer.Reset(max(c.left, 0))
	}
}

// Stop ends the clock (Err becomes context.Canceled unless it had ended
// already) and releases its timer.
func (c *Clock) Stop() {
	c.unhook()
	c.end(context.Canceled, false)
}

// Expired says whether the clock ended because the call spent its timeout.
func (c *Clock) Expired() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expired
}

func (c *Clock) Deadline() (time.Time, bool) { return c.parent.Deadline() }
func (c *Clock) Done() <-chan struct{}       { return c.done }
func (c *Clock) Value(key any) any           { return c.parent.Value(key) }

func (c *Clock) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
