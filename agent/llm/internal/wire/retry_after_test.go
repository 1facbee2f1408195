package wire

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
		if got := RetryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}
