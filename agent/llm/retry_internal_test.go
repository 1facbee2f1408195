package llm

import (
	"testing"
	"time"
)

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
