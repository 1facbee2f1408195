package store

import (
	"bytes"
	"fmt"

	"github.com/darman-dev/darman/agent"
)

var schemaKey = []byte("meta/schema")

const (
	sessionPrefix = "s/"
	messagePrefix = "m/"
	partPrefix    = "p/"
	grantPrefix   = "g/"
)

func sessionKey(id agent.ID) []byte { return []byte(sessionPrefix + string(id)) }

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
