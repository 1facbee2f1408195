package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/darman-dev/darman/diagnostics"
)

// Code is a tool error's code: the first word of an isError result's
// text.
type Code string

const (
	CodeInvalidInput    Code = "MCP-INVALID-INPUT"
	CodeProjectNotFound Code = "MCP-PROJECT-NOT-FOUND"
	CodeOutsideProject  Code = "MCP-PATH-OUTSIDE-PROJECT"
	CodeNoServer        Code = "MCP-NO-LANGUAGE-SERVER"
	// CodeServerUnavailable: the language server runs but cannot load the
	// project, so it cannot answer (its empty answers would read as
	// "nothing found"); the text quotes it and says what to do.
	CodeServerUnavailable Code = "MCP-LANGUAGE-SERVER-UNAVAILABLE"
	CodeSymbolNotFound    Code = "MCP-SYMBOL-NOT-FOUND"
	CodeTimeout           Code = "MCP-TIMEOUT"
	CodeInternal          Code = "MCP-INTERNAL"
)

// ToolError is a failure the client should see as a tool result: a code
// it can branch on and a message saying what to do.
type ToolError struct {
	Code    Code
	Message string
}

func (e *ToolError) Error() string { return string(e.Code) + ": " + e.Message }

func toolErrorf(code Code, format string, args ...any) *ToolError {
	return &ToolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// classify turns an error from the pool into a ToolError.
func classify(ctx context.Context, err error) *ToolError {
	var te *ToolError
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, diagnostics.ErrCannotLoad):
		return toolErrorf(CodeServerUnavailable, "%v", err)
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded:
		return toolErrorf(CodeTimeout, "the language server did not answer in time (%v); try again, or narrow the query", err)
	case errors.Is(err, diagnostics.ErrNotInstalled), errors.Is(err, diagnostics.ErrNoServer):
		return toolErrorf(CodeNoServer, "%v", err)
	case errors.Is(err, diagnostics.ErrUnavailable):
		return toolErrorf(CodeNoServer, "%v; it restarts on the next call after its backoff", err)
	case strings.Contains(err.Error(), "unknown symbol kind"):
		return toolErrorf(CodeInvalidInput, "%v", err)
	}
	return toolErrorf(CodeInternal, "%v", err)
}
