package store

import "time"

// SetCloseWait sets how long Close waits for badger, for a test.
func SetCloseWait(d time.Duration) { closeWait = d }
