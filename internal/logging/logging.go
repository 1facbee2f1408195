// Package logging builds darman's log/slog logger: text records to stderr
// or to a file, never to stdout (which belongs to the LSP, MCP and ACP
// streams), with secrets masked on the way out.
//
// Start with [New]. Library packages never call it: they take the
// *slog.Logger it returns through their options. [Redactor] masks
// secret-looking attributes, strings that look like API keys, and any value
// registered with [Redactor.Add] (the binary adds the configuration's keys).
package logging

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Options configure [New].
type Options struct {
	// Level is "debug", "info", "warn" or "error" (any case); "" means info.
	Level string
	// File, when set, receives the log (appended, created with mode 0600,
	// its directory with 0700) instead of Stderr.
	File string
	// Stderr receives the log when File is empty; nil means os.Stderr.
	// os.Stdout is refused.
	Stderr io.Writer
	// Redactor masks secrets; nil means a new one that knows only the
	// built-in patterns. Pass your own to Add secrets later.
	Redactor *Redactor
}

// New returns a logger writing text records as Options say, and a Closer
// that closes the log file (a no-op for stderr). Call Close once, after the
// last record.
func New(opts Options) (*slog.Logger, io.Closer, error) {
	level, err := parseLevel(opts.Level)
	if err != nil {
		return nil, nil, err
	}
	w := opts.Stderr
	if w == nil {
		w = os.Stderr
	}
	if w == os.Stdout {
		return nil, nil, errors.New("logging: refusing to log to stdout, which carries the protocol stream; log to stderr or a file")
	}
	var closer io.Closer = nopCloser{}
	if opts.File != "" {
		if err := os.MkdirAll(filepath.Dir(opts.File), 0o700); err != nil {
			return nil, nil, fmt.Errorf("logging: create the log file's directory: %w", err)
		}
		f, err := os.OpenFile(opts.File, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("logging: open the log file: %w", err)
		}
		w, closer = f, f
	}
	r := opts.Redactor
	if r == nil {
		r = new(Redactor)
	}
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
	return slog.New(r.Handler(h)), closer, nil
}

func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf(`logging: unknown level %q: expected "debug", "info", "warn" or "error"`, s)
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
