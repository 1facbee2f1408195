package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/darman-dev/darman/agent"
)

// ErrNotFound is returned (wrapped) when a session, or a session ID prefix,
// names nothing in the store.
var ErrNotFound = errors.New("not found")

// ErrAmbiguous is returned (wrapped) when a session ID prefix names more than
// one session.
var ErrAmbiguous = errors.New("ambiguous")

// ErrExists is returned (wrapped) when an import would overwrite a session.
var ErrExists = errors.New("already exists")

// Grant is a permission answered "always" (allow or deny) in one workspace.
type Grant struct {
	Workspace  string    `json:"workspace"`
	Permission string    `json:"permission"`
	Pattern    string    `json:"pattern"`
	Action     string    `json:"action"` // "allow" or "deny"
	Created    time.Time `json:"created"`
}

// ListOptions narrows ListSessions.
type ListOptions struct {
	// Workspace keeps only the sessions of this workspace root; "" keeps all.
	Workspace string
	// Limit caps the number of sessions returned; zero means no cap.
	Limit int
	// Children includes sub-task sessions; by default only top-level ones.
	Children bool
	// After continues a list where an earlier one stopped: the Cursor of
	// the last session it returned. Paging with Limit and After costs the
	// page, not the store's number of sessions.
	After string
}

// Cursor is where a list that returned s last stops, for ListOptions.After.
// It is opaque to callers.
func Cursor(s agent.Session) string { return string(recentKey(s)[len(recentPrefix):]) }

// PageOptions choose a page of a session's history for Store.Page.
type PageOptions struct {
	// Before, when set, is a message ID: the page ends just before it.
	// Empty means the page ends with the session's last message.
	Before agent.ID
	// Limit is how many messages the page holds at most; zero means 100.
	Limit int
}

// Page is a run of a session's messages, oldest first.
type Page struct {
	Messages []agent.MessageWithParts
	// More says older messages come before the page: ask again with
	// Before set to the page's first message.
	More bool
}

// Export is a whole session as plain data: what `darman sessions export`
// writes and Import reads back.
type Export struct {
	// Version is the export format's version, ExportVersion when written.
	Version  int                      `json:"version"`
	Session  agent.Session            `json:"session"`
	Messages []agent.MessageWithParts `json:"messages"`
	// Blobs are the blobs the parts refer to (agent.File.Blob), by key.
	Blobs map[string][]byte `json:"blobs,omitempty"`
}

// ExportVersion is the version of the export format this darman writes.
const ExportVersion = 1

// Stats describes the database for `darman doctor`.
type Stats struct {
	Dir           string `json:"dir"`
	Schema        int    `json:"schema"`
	Sessions      int    `json:"sessions"`
	LSMBytes      int64  `json:"lsmBytes"`
	ValueLogBytes int64  `json:"valueLogBytes"`
	OwnerPID      int    `json:"ownerPid"`
	// Tables is how many table files badger has; JournalBytes the
	// journal's size (see docs/sessions.md).
	Tables       int   `json:"tables"`
	JournalBytes int64 `json:"journalBytes"`
	// Written is the bytes of keys and values the owner has written since
	// it opened the database (a deletion counts its key).
	Written int64 `json:"writtenBytes"`
}

// op names one store call. Calls travel as values so that the owner can
// serve other processes the same calls it runs for itself.
type op uint8

const (
	opPutSession op = iota + 1
	opGetSession
	opResolve
	opListSessions
	opDeleteSession
	opPutMessage
	opPutPart
	opMessages
	opPutGrant
	opGrants
	opDeleteGrant
	opImport
	opStats
	opCompact
	opAppendPart
	opPage
	opWindow
	opPutCheckpoint
	opCheckpoints
	opPutBlob
	opBlob
)

// request is one store call. Only the fields its op uses are set.
type request struct {
	Op      op
	ID      agent.ID
	Text    string // workspace for grants, ID prefix for resolve, appended text
	Seq     int    // the number of an append
	Session agent.Session
	Message agent.Message
	Part    agent.Part
	Grant   Grant
	List    ListOptions
	Page    PageOptions
	Export  *Export

	// Checkpoint is what opPutCheckpoint writes.
	Checkpoint agent.Checkpoint
	Data       []byte // a blob's bytes
}

// response is the answer to a request. Errors travel as a code and text so
// that errors.Is works on the client side too.
type response struct {
	Session  agent.Session
	Sessions []agent.Session
	Messages []agent.MessageWithParts
	More     bool
	Grants   []Grant
	ID       agent.ID
	Stats    Stats
	Data     []byte
	Code     string
	Err      string

	// Checkpoints answers opCheckpoints.
	Checkpoints []agent.Checkpoint
}

var errorCodes = map[string]error{
	"not_found": ErrNotFound,
	"ambiguous": ErrAmbiguous,
	"exists":    ErrExists,
	"damaged":   ErrDamaged,
	"disk_full": ErrDiskFull,
}

func (r *response) setErr(err error) {
	if err == nil {
		return
	}
	r.Err = err.Error()
	for code, sentinel := range errorCodes {
		if errors.Is(err, sentinel) {
			r.Code = code
		}
	}
}

func (r *response) err() error {
	if r.Err == "" {
		return nil
	}
	if sentinel, ok := errorCodes[r.Code]; ok {
		return &codedError{msg: r.Err, sentinel: sentinel}
	}
	return errors.New(r.Err)
}

// codedError carries an error's text across the socket and keeps it
// matchable with errors.Is against the sentinel it wrapped.
type codedError struct {
	msg      string
	sentinel error
}

func (e *codedError) Error() string { return e.msg }
func (e *codedError) Unwrap() error { return e.sentinel }

func notFound(what string, id agent.ID) error {
	return fmt.Errorf("%s %s: %w", what, id, ErrNotFound)
}
