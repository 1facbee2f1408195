package tool_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/darman-dev/darman/agent/tool"
)

// The clock counts only the time nobody was being waited for: 10 s of
// work, three minutes of a question, 19 s more and the clock still runs;
// the 30th second of work ends it as a timeout.
func TestClockStopsWhilePaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := tool.NewClock(t.Context(), 30*time.Second)
		defer c.Stop()
		time.Sleep(10 * time.Second)
		resume := c.Pause()
		inner := c.Pause() // a nested wait
		time.Sleep(3 * time.Minute)
		inner()
		time.Sleep(time.Minute) // still paused by the outer wait
		resume()
		resume() // a second resume changes nothing
		time.Sleep(19 * time.Second)
		synctest.Wait()
		if err := c.Err(); err != nil {
			t.Fatalf("after 29 s of work the clock ended: %v", err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if !errors.Is(c.Err(), context.DeadlineExceeded) || !c.Expired() {
			t.Fatalf("after 30 s of work: Err %v, Expired %v; want a timeout", c.Err(), c.Expired())
		}
	})
}

// A paused clock still ends with its parent (the turn cancelled), and
// Stop ends it without a timeout.
func TestClockEndsWithItsParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(t.Context())
		c := tool.NewClock(parent, time.Second)
		defer c.Stop()
		c.Pause()
		time.Sleep(time.Hour)
		cancel()
		<-c.Done()
		if !errors.Is(c.Err(), context.Canceled) || c.Expired() {
			t.Errorf("cancelled parent: Err %v, Expired %v", c.Err(), c.Expired())
		}

		s := tool.NewClock(t.Context(), time.Second)
		s.Stop()
		if !errors.Is(s.Err(), context.Canceled) || s.Expired() {
			t.Errorf("stopped: Err %v, Expired %v", s.Err(), s.Expired())
		}
		// A context made under the clock sees its timeout as a timeout.
		e := tool.NewClock(t.Context(), time.Second)
		defer e.Stop()
		child, stop := context.WithCancel(e)
		defer stop()
		<-child.Done()
		if !errors.Is(child.Err(), context.DeadlineExceeded) {
			t.Errorf("child of an expired clock: %v", child.Err())
		}
	})
}
