package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfterHeaders(t *testing.T) {
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"4"}}, 4 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After-Ms": {"-5"}}, 0},
		{nil, 0},
	}
	for _, tc := range cases {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 6, BaseDelay: time.Second, MaxDelay: 5 * time.Second}.withDefaults()
	for next, base := range map[int]time.Duration{2: time.Second, 3: 2 * time.Second, 4: 4 * time.Second} {
		for range 50 {
			d, ok := p.delay(next, 0)
			if !ok || d < base*3/4 || d > base*5/4 {
				t.Fatalf("attempt %d: waited %v, want %v ± 25%%", next, d, base)
			}
		}
	}
	if d, ok := p.delay(5, 0); !ok || d > 5*time.Second {
		t.Errorf("attempt 5 waits %v, above the 5 s cap", d)
	}
	if _, ok := p.delay(7, 0); ok {
		t.Error("a 7th attempt with MaxAttempts 6")
	}
	if d, ok := p.delay(2, 3*time.Second); !ok || d != 3*time.Second {
		t.Errorf("the server's 3 s became %v", d)
	}
	if _, ok := p.delay(2, 6*time.Second); ok {
		t.Error("retried after a retry-after above MaxDelay")
	}
	if d := (RetryPolicy{}).withDefaults(); d.MaxAttempts != 4 || d.MaxDelay != time.Minute || d.BaseDelay != time.Second {
		t.Errorf("defaults %+v", d)
	}
}
