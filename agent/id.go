package agent

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ID identifies a session, message or part. It is a kind prefix ("ses_",
// "msg_", "prt_") followed by a ULID (github.com/ulid/spec: 48 bits of
// Unix milliseconds, then 80 random bits, in 26 characters of Crockford's
// base32), so IDs of one kind sort by creation time as plain strings,
// which is what the store's key layout relies on.
type ID string

// The prefixes of the three kinds of ID.
const (
	SessionPrefix = "ses_"
	MessagePrefix = "msg_"
	PartPrefix    = "prt_"
)

// crockford is the ULID alphabet: Crockford's base32, without I, L, O, U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// last is the newest ULID this process made. A ULID made in the same
// millisecond, or while the clock stands behind it, is last plus one, so
// IDs made one after another sort in that order whatever the clock does.
var last struct {
	sync.Mutex
	ms      uint64
	entropy [10]byte
}

func newID(prefix string) ID {
	last.Lock()
	defer last.Unlock()
	ms := uint64(max(time.Now().UnixMilli(), 0))
	if ms > last.ms {
		last.ms = ms
		rand.Read(last.entropy[:])
	} else if !increment(last.entropy[:]) {
		// 2^80 IDs in one millisecond: the next millisecond's.
		last.ms++
		rand.Read(last.entropy[:])
	}
	return ID(prefix + encodeULID(last.ms, last.entropy))
}

// increment adds one to the big-endian number b, and reports false when
// it wrapped around to zero.
func increment(b []byte) bool {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return true
		}
	}
	return false
}

// encodeULID writes the 128 bits ms<<80 | entropy as 26 base32 digits,
// 5 bits each from the top (the first digit holds the top 3 bits).
func encodeULID(ms uint64, entropy [10]byte) string {
	hi := ms<<16 | uint64(entropy[0])<<8 | uint64(entropy[1]) // bits 127..64
	var lo uint64                                             // bits 63..0
	for _, b := range entropy[2:] {
		lo = lo<<8 | uint64(b)
	}
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// ulidTime returns the milliseconds of a ULID's 26 characters, or false
// when they are not a ULID: a character outside the alphabet (either
// case), or a first digit above 7, which would need more than 128 bits.
func ulidTime(s string) (uint64, bool) {
	if len(s) != 26 || s[0] > '7' {
		return 0, false
	}
	var ms uint64
	for i := range len(s) {
		d := strings.IndexByte(crockford, upper(s[i]))
		if d < 0 {
			return 0, false
		}
		if i < 10 { // the first digit's 3 bits and 9 more digits: the 48 bits of time
			ms = ms<<5 | uint64(d)
		}
	}
	return ms, true
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// NewSessionID returns a new, unique session ID.
func NewSessionID() ID { return newID(SessionPrefix) }

// NewMessageID returns a new, unique message ID.
func NewMessageID() ID { return newID(MessagePrefix) }

// NewPartID returns a new, unique part ID.
func NewPartID() ID { return newID(PartPrefix) }

// Time returns when the ID was made, or the zero time if it is not a
// well-formed ID.
func (id ID) Time() time.Time {
	_, rest, ok := strings.Cut(string(id), "_")
	if !ok {
		return time.Time{}
	}
	ms, ok := ulidTime(rest)
	if !ok {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

// Validate reports whether id is a well-formed ID with the given prefix.
func (id ID) Validate(prefix string) error {
	rest, ok := strings.CutPrefix(string(id), prefix)
	if !ok {
		return fmt.Errorf("%q is not an ID of this kind: it should start with %q", id, prefix)
	}
	if _, ok := ulidTime(rest); !ok {
		return fmt.Errorf("%q is not a well-formed ID: after %q it needs 26 characters of 0-9 and A-Z without I, L, O and U, the first 0-7", id, prefix)
	}
	return nil
}

func (id ID) String() string { return string(id) }
