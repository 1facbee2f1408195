package checkpoint

import (
	"context"
	"os"
	"time"
)

// lockFile takes an exclusive lock on path, waiting (polling, so ctx can
// stop the wait) while another darman process holds it. The lock belongs
// to the open file, so a second lockFile in this process waits too.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	delay := time.Millisecond
	for {
		busy, err := tryLockFile(f)
		if err == nil {
			return func() { unlockFile(f); f.Close() }, nil
		}
		if !busy {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}
