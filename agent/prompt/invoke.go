package prompt

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// ParseInvocation splits a prompt that runs a command, "/name arguments":
// the slash must be its first character, and the name runs to the first
// white space. A first word with another slash is a path ("/usr/bin/env
// fails"), not a command, so such a prompt is not an invocation (ok is
// false) and is sent as it is. args is the rest, trimmed.
func ParseInvocation(text string) (name, args string, ok bool) {
	text = strings.TrimRightFunc(text, unicode.IsSpace)
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	word, rest := text, ""
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		word, rest = text[:i], strings.TrimSpace(text[i:])
	}
	name = word[1:]
	if name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return name, rest, true
}

// ErrUnknownCommand is what Invocation's error matches with errors.Is.
var ErrUnknownCommand = errors.New("unknown command")

// UnknownCommandError is a prompt that names a command there is not; its
// text lists the commands there are.
type UnknownCommandError struct {
	Name     string
	Commands *Commands
}

func (e *UnknownCommandError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown command /%s", e.Name)
	var list []Command
	if e.Commands != nil {
		list = e.Commands.List()
	}
	if len(list) == 0 {
		fmt.Fprintf(&b, ": no commands are defined here. A command is a Markdown file such as .darman/command/%s.md in the project; "+
			"to send a prompt that starts with a slash, put a space before it", e.Name)
	} else {
		b.WriteString("; the commands here are:")
		for _, c := range list {
			fmt.Fprintf(&b, "\n  /%s", c.Name)
			if c.ArgumentHint != "" {
				b.WriteString(" " + c.ArgumentHint)
			}
			if c.Description != "" {
				b.WriteString("  — " + c.Description)
			}
		}
	}
	if e.Commands != nil {
		for _, p := range e.Commands.Problems {
			fmt.Fprintf(&b, "\n(skipped %s)", p)
		}
	}
	return b.String()
}

// Is makes errors.Is(err, ErrUnknownCommand) true.
func (e *UnknownCommandError) Is(target error) bool { return target == ErrUnknownCommand }

// Invocation finds the command a prompt runs (see ParseInvocation): ok is
// false for a prompt that is not an invocation, and an invocation of a
// command there is not is an *UnknownCommandError. Every front reads a
// typed prompt through it, so "/name args" means the same everywhere. A
// nil c has no commands.
func (c *Commands) Invocation(text string) (cmd *Command, args string, err error) {
	name, args, ok := ParseInvocation(text)
	if !ok {
		return nil, "", nil
	}
	if c != nil {
		if found, ok := c.Get(name); ok {
			return &found, args, nil
		}
	}
	return nil, "", &UnknownCommandError{Name: name, Commands: c}
}
