package client

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// FailureClass says what kind of failure a binding met, for people and for
// code that branches on it.
type FailureClass string

// The failure classes.
const (
	// FailureNotFound: the command is not on PATH or does not exist.
	FailureNotFound FailureClass = "not found"
	// FailureSpawn: the command exists but could not be started.
	FailureSpawn FailureClass = "spawn failed"
	// FailureUnreachable: a remote server refused or dropped the connection.
	FailureUnreachable FailureClass = "unreachable"
	// FailureExited: the server exited before the handshake completed.
	FailureExited FailureClass = "exited during startup"
	// FailureHandshakeTimeout: the server did not complete the handshake
	// within the startup timeout.
	FailureHandshakeTimeout FailureClass = "handshake timeout"
	// FailureProtocol: the server spoke something other than MCP, or a
	// version darman does not speak.
	FailureProtocol FailureClass = "protocol mismatch"
	// FailureAuth: a remote server wants credentials (HTTP 401 or 403).
	FailureAuth FailureClass = "auth required"
	// FailureInvalidConfig: the definition cannot work as written.
	FailureInvalidConfig FailureClass = "invalid config"
	// FailureCrashed: a ready server's connection ended.
	FailureCrashed FailureClass = "crashed"
	// FailureCallTimeout: one call outlived the call timeout.
	FailureCallTimeout FailureClass = "call timeout"
)

// maxMessage bounds a failure's text: it reaches logs, the editor and the
// model, and a server's error can be as long as it likes.
const maxMessage = 400

// minSecret is the shortest value scrubbed: shorter ones ("1", "true",
// "-y") are flags, and masking them would garble every message.
const minSecret = 6

// Failure is one binding's failure, with a bounded, redacted message.
type Failure struct {
	Server   string       `json:"server"`
	Required bool         `json:"required"`
	Class    FailureClass `json:"class"`
	Message  string       `json:"message"`
}

func (f *Failure) Error() string {
	return fmt.Sprintf("mcp server %s: %s: %s", f.Server, f.Class, f.Message)
}

// StartupError lists every binding that failed to start, required or not.
type StartupError struct {
	Failures []Failure
}

func (e *StartupError) Error() string {
	var b strings.Builder
	b.WriteString("mcp servers failed to start:")
	for _, f := range e.Failures {
		kind := "optional"
		if f.Required {
			kind = "required"
		}
		fmt.Fprintf(&b, "\n  %s (%s): %s: %s", f.Server, kind, f.Class, f.Message)
	}
	return b.String()
}

// Required reports whether any failure is of a required binding.
func (e *StartupError) Required() bool {
	for _, f := range e.Failures {
		if f.Required {
			return true
		}
	}
	return false
}

// scrub makes text safe to show: each secret replaced, control characters
// flattened, and the whole cut to maxMessage bytes on a rune boundary.
func scrub(text string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= minSecret {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	text = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, text)
	text = strings.Join(strings.Fields(text), " ")
	if len(text) <= maxMessage {
		return text
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "…"
}
