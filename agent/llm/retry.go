package llm

import (
	"math/rand/v2"
	"time"
)

// RetryPolicy says how often and how patiently a failed call is tried
// again. darman's retries replace the SDKs' own, which are turned off, so
// that every retry is visible as an [EventRetry].
type RetryPolicy struct {
	// MaxAttempts is the most attempts of one call, the first included.
	// Zero means 4; 1 means never retry.
	MaxAttempts int
	// MaxDelay caps the wait before one retry. Zero means 60 s. A server
	// that asks (retry-after) for a longer wait is not retried.
	MaxDelay time.Duration
	// BaseDelay is the wait before the first retry when the server does not
	// say; it doubles for each further retry. Zero means 1 s.
	BaseDelay time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 60 * time.Second
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	return p
}

// delay is the wait before attempt number next (2 for the first retry),
// and false when the policy gives up: too many attempts, or the server
// asked for a wait longer than MaxDelay.
func (p RetryPolicy) delay(next int, retryAfter time.Duration) (time.Duration, bool) {
	if next > p.MaxAttempts {
		return 0, false
	}
	if retryAfter > 0 {
		if retryAfter > p.MaxDelay {
			return 0, false
		}
		return retryAfter, true
	}
	d := p.BaseDelay << (next - 2)
	if d <= 0 || d > p.MaxDelay {
		d = p.MaxDelay
	}
	// Jitter of up to a quarter either way keeps clients that failed
	// together from retrying together.
	jitter := time.Duration(rand.Int64N(int64(d)/2+1)) - d/4
	d += jitter
	return min(d, p.MaxDelay), true
}
