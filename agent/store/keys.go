package store

import (
	"bytes"
	"encoding/hex"
	"fmt"

	"github.com/darman-dev/darman/agent"
)

var schemaKey = []byte("meta/schema")

const (
	sessionPrefix = "s/"
	messagePrefix = "m/"
	partPrefix    = "p/"
	grantPrefix   = "g/"
	// recentPrefix orders the sessions most recently updated first (see
	// recentKey).
	recentPrefix = "u/"
)

func sessionKey(id agent.ID) []byte { return []byte(sessionPrefix + string(id)) }

// recentKey is a session's entry in the index of sessions by update time:
// u/<the update time's UnixNano, inverted, 16 hex digits>/<sessionID>, so a
// prefix scan meets the most recently updated first (ties: the later ID
// first, as the list sorts them). Its value is the session's workspace,
// a NUL, and its parent's ID: what a list filters on, without reading the
// session.
func recentKey(s agent.Session) []byte {
	return fmt.Appendf([]byte(recentPrefix), "%016x/%s", ^uint64(s.Updated.UnixNano()), invertID(s.ID))
}

func recentValue(s agent.Session) []byte {
	return []byte(s.Workspace + "\x00" + string(s.ParentID))
}

// invertID maps an ID to a string that sorts in its reverse order.
func invertID(id agent.ID) string {
	b := []byte(id)
	for i, c := range b {
		b[i] = 0xff - c
	}
	return hex.EncodeToString(b)
}

// idOfRecent is the session ID in a recentKey.
func idOfRecent(key []byte) (agent.ID, bool) {
	_, hexID, ok := bytes.Cut(key[len(recentPrefix):], []byte("/"))
	if !ok {
		return "", false
	}
	b, err := hex.DecodeString(string(hexID))
	if err != nil {
		return "", false
	}
	for i, c := range b {
		b[i] = 0xff - c
	}
	return agent.ID(b), true
}

func messageKey(session, message agent.ID) []byte {
	return []byte(messagePrefix + string(session) + "/" + string(message))
}

func messagesOf(session agent.ID) []byte { return []byte(messagePrefix + string(session) + "/") }

func partKey(p agent.Part) []byte {
	return []byte(partPrefix + string(p.SessionID) + "/" + string(p.MessageID) + "/" + string(p.ID))
}

func partsOf(session agent.ID) []byte { return []byte(partPrefix + string(session) + "/") }

// appendKey is where the seq-th text appended to part p is kept: under the
// part's own key, so a prefix scan meets a part's record, then its appends
// in order. seq is written as eight hex digits so that keys sort by it.
func appendKey(p agent.Part, seq int) []byte {
	k := partKey(p)
	k = append(k, '/')
	return fmt.Appendf(k, "%08x", seq)
}

// appendsOf is the prefix of part p's appends.
func appendsOf(p agent.Part) []byte { return append(partKey(p), '/') }

// isAppend reports whether key, found under partsOf(session), is an
// append (p/<s>/<m>/<part>/<seq>) rather than a part (p/<s>/<m>/<part>).
func isAppend(session agent.ID, key []byte) bool {
	return bytes.Count(key[len(partsOf(session)):], []byte("/")) == 2
}

func grantKey(g Grant) []byte {
	return []byte(grantPrefix + g.Workspace + "\x00" + g.Permission + "\x00" + g.Pattern)
}

func grantsOf(workspace string) []byte { return []byte(grantPrefix + workspace + "\x00") }
