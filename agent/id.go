package agent

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// ID identifies a session, message or part. It is a kind prefix ("ses_",
// "msg_", "prt_") followed by a ULID, so IDs of one kind sort by creation
// time as plain strings, which is what the store's key layout relies on.
type ID string

// The prefixes of the three kinds of ID.
const (
	SessionPrefix = "ses_"
	MessagePrefix = "msg_"
	PartPrefix    = "prt_"
)

var (
	entropyMu sync.Mutex
	// Monotonic entropy keeps IDs made in the same millisecond by this
	// process in creation order.
	entropy = ulid.Monotonic(rand.Reader, 0)
)

func newID(prefix string) ID {
	entropyMu.Lock()
	defer entropyMu.Unlock()
	return ID(prefix + ulid.MustNew(ulid.Timestamp(time.Now()), entropy).String())
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
	u, err := ulid.ParseStrict(rest)
	if err != nil {
		return time.Time{}
	}
	return ulid.Time(u.Time())
}

// Validate reports whether id is a well-formed ID with the given prefix.
func (id ID) Validate(prefix string) error {
	rest, ok := strings.CutPrefix(string(id), prefix)
	if !ok {
		return fmt.Errorf("%q is not an ID of this kind: it should start with %q", id, prefix)
	}
	if _, err := ulid.ParseStrict(rest); err != nil {
		return fmt.Errorf("%q is not a well-formed ID: %v", id, err)
	}
	return nil
}

func (id ID) String() string { return string(id) }
