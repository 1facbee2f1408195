package agent

import (
	"strings"
	"testing"
	"time"
)

// The vectors are oklog/ulid v2's encodings (which made darman's IDs
// before): IDs already in users' stores must read the same.
func TestULIDMatchesTheSpec(t *testing.T) {
	for _, c := range []struct {
		ms      uint64
		entropy [10]byte
		want    string
	}{
		{0, [10]byte{}, "00000000000000000000000000"},
		{1469918176385, [10]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6}, "01ARYZ6S41VTPVXVR1081G8186"},
		{1<<48 - 1, [10]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255}, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{1764633600123, [10]byte{0x80, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "01KBE5QR3VG000000000000001"},
	} {
		if got := encodeULID(c.ms, c.entropy); got != c.want {
			t.Errorf("encodeULID(%d, %x) = %s, want %s", c.ms, c.entropy, got, c.want)
		}
		for _, s := range []string{c.want, strings.ToLower(c.want)} {
			if ms, ok := ulidTime(s); !ok || ms != c.ms {
				t.Errorf("ulidTime(%s) = %d, %v; want %d", s, ms, ok, c.ms)
			}
		}
	}
	// The spec's own example.
	if got := ID("ses_01ARZ3NDEKTSV4RRFFQ69G5FAV").Time(); !got.Equal(time.UnixMilli(1469922850259)) {
		t.Errorf("time of the spec's example: %v", got)
	}
	for _, bad := range []string{"80000000000000000000000000", "0000000000000000000000000I", "0000000000000000000000000", "01ARZ3NDEKTSV4RRFFQ69G5FA-"} {
		if _, ok := ulidTime(bad); ok {
			t.Errorf("%s read as a ULID", bad)
		}
	}
}

// IDs keep their order when the clock stands behind the last one made
// (it was set back) and when one millisecond's 2^80 are used up.
func TestIDOrderSurvivesTheClock(t *testing.T) {
	before := NewPartID()
	last.Lock()
	saved := last.ms
	t.Cleanup(func() { last.Lock(); last.ms = saved; last.Unlock() }) // back to the clock for the other tests
	last.ms = uint64(time.Now().Add(time.Hour).UnixMilli())
	last.entropy = [10]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 254}
	future := last.ms
	last.Unlock()
	a, b, c := NewPartID(), NewPartID(), NewPartID()
	if !(before < a && a < b && b < c) {
		t.Fatalf("not in creation order: %s %s %s %s", before, a, b, c)
	}
	if got := c.Time(); !got.Equal(time.UnixMilli(int64(future + 1))) {
		t.Fatalf("after the millisecond's last ID, the next is at %v, want %v", got, time.UnixMilli(int64(future+1)))
	}
}
