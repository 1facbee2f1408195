package permission

import (
	"context"
	"encoding/json"
	"errors"
)

// Elicitor takes a request for input to a human, as an Asker takes a
// permission question: the MCP client asks it when a server elicits (a
// form to fill in, a URL to open), and each front implements it the way
// its user answers (the editor's prompts, the terminal). A front with
// nobody behind it returns ErrNoHuman. An elicitation is never persisted:
// one (above all an open-URL one, whose target may carry a one-time
// token) dies with the process and is never offered again after a
// restart.
type Elicitor interface {
	// Elicit shows req to the human and returns their answer. It returns
	// ErrNoHuman when nobody can answer (the asker is told "decline"); any
	// other error, or ctx ending, tells the asker "cancel". It must be safe
	// for concurrent use.
	Elicit(ctx context.Context, req Elicitation) (ElicitAnswer, error)
}

// ErrNoHuman is what an Elicitor returns when nobody is there to answer.
var ErrNoHuman = errors.New("no human is reachable to answer")

// Elicitation is one request for input from the human.
type Elicitation struct {
	// Server names who asks (an MCP server); show it, so the human knows
	// who wants the answer.
	Server string
	// Mode is "form" (fill in Fields) or "url" (open URL in a browser).
	Mode    string
	Message string
	// Fields are a form's fields, in name order, from the requested
	// schema; Schema is that schema as the server sent it.
	Fields []ElicitField
	Schema json.RawMessage
	// URL and ID are an open-URL request's target and elicitation id.
	URL string
	ID  string
}

// ElicitField is one field of a form. Its JSON form is the field as the
// LSP front's darman/elicit sends it.
type ElicitField struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is the JSON type: string, number, integer, boolean or array
	// (of Enum's choices).
	Type     string `json:"type"`
	Required bool   `json:"required"`
	// Enum lists the allowed values of a choice, when the schema has them.
	Enum []string `json:"enum,omitempty"`
	// Default is the value the form starts with, when the server gave one.
	Default any `json:"default,omitempty"`
	// Minimum and Maximum bound a number or an integer, when the schema
	// does.
	Minimum *float64 `json:"minimum,omitempty"`
	Maximum *float64 `json:"maximum,omitempty"`
	// Format is a string's format (email, uri, date, date-time), a hint
	// for the prompt.
	Format string `json:"format,omitempty"`
}

// ElicitAnswer is the human's answer.
type ElicitAnswer struct {
	// Action is "accept", "decline" or "cancel".
	Action string
	// Content holds a form's values when Action is "accept"; the MCP
	// client checks them against the requested schema before the server
	// sees them.
	Content map[string]any
}

// DeclineElicitor answers every elicitation with ErrNoHuman: the elicitor
// of a front with no human behind it (CI, a pipe).
type DeclineElicitor struct{}

// Elicit declines.
func (DeclineElicitor) Elicit(context.Context, Elicitation) (ElicitAnswer, error) {
	return ElicitAnswer{}, ErrNoHuman
}
