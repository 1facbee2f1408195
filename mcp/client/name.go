package client

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxNameLen is the longest model-facing tool name; providers refuse more.
const MaxNameLen = 64

// ModelName is the name the model sees for a server's tool:
// "{server}_{tool}" with every character outside [a-zA-Z0-9_-] replaced by
// "_". A name over MaxNameLen is cut and ends with "_" and eight hex digits
// of a hash of the server and raw tool names, so it is stable and two long
// names that share a prefix still differ.
func ModelName(server, tool string) string {
	name := sanitize(server) + "_" + sanitize(tool)
	if len(name) <= MaxNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return name[:MaxNameLen-len(suffix)] + suffix
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// DuplicateNameError refuses a tool whose model-facing name another tool
// already holds.
type DuplicateNameError struct {
	ModelName string
	// Server and Tool name the refused tool; OtherServer and OtherTool the
	// one that holds the name.
	Server, Tool           string
	OtherServer, OtherTool string
}

func (e *DuplicateNameError) Error() string {
	return fmt.Sprintf("mcp tool %s/%s is refused: its model name %q is already %s/%s's; rename one server or hide one tool with denyTools",
		e.Server, e.Tool, e.ModelName, e.OtherServer, e.OtherTool)
}
