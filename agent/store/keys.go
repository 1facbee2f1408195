package store

import (
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

func grantKey(g Grant) []byte {
	return []byte(grantPrefix + g.Workspace + "\x00" + g.Permission + "\x00" + g.Pattern)
}

func grantsOf(workspace string) []byte { return []byte(grantPrefix + workspace + "\x00") }
