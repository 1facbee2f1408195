package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/darman-dev/darman/agent"
)

// OutputDir is where the tools of a session keep the full output of calls
// whose result they had to cut: a directory under the OS temp dir, private
// to the user. The read tool reads files there without asking, since darman
// wrote them.
func OutputDir(session agent.ID) string {
	name := string(session)
	if name == "" || strings.ContainsAny(name, `/\.`) {
		name = "session"
	}
	return filepath.Join(outputBase(), name)
}

// RemoveOutputs deletes a session's saved outputs; the agent loop calls it
// when the session ends.
func RemoveOutputs(session agent.ID) error {
	return os.RemoveAll(OutputDir(session))
}

func outputBase() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("darman-%d", os.Getuid()))
}

// saveOutput writes a call's full output to the session's output directory
// and returns the file's path.
func saveOutput(env *Env, tool string, content []byte) (string, error) {
	base := outputBase()
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("save the full output: %w", err)
	}
	// The temp dir is shared: refuse a base someone else made, or a link.
	info, err := os.Lstat(base)
	if err != nil {
		return "", fmt.Errorf("save the full output: %w", err)
	}
	if !privateDir(info) {
		return "", fmt.Errorf("save the full output: %s is not a private directory of this user", base)
	}
	dir := OutputDir(env.SessionID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("save the full output: %w", err)
	}
	call := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, env.CallID)
	f, err := os.CreateTemp(dir, tool+"-"+call+"-*.txt")
	if err != nil {
		return "", fmt.Errorf("save the full output: %w", err)
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return "", fmt.Errorf("save the full output: %w", err)
	}
	return f.Name(), f.Close()
}

// inOutputDir reports whether abs lies in the session's output directory.
func inOutputDir(env *Env, abs string) bool {
	dir := OutputDir(env.SessionID)
	if !strings.HasPrefix(abs, dir+string(filepath.Separator)) {
		return false
	}
	// Judge the real path, so a link planted there cannot lead out.
	real, err := filepath.EvalSymlinks(abs)
	return err == nil && strings.HasPrefix(real, dir+string(filepath.Separator)) ||
		errors.Is(err, fs.ErrNotExist)
}

// headTail shortens s to about max bytes, keeping its first head bytes and
// its end, cut at line ends where one is near, and says what it left out.
// It returns s unchanged when it fits.
func headTail(s string, max, head int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	tail := max - head
	h := cutBefore(s, head)
	t := cutAfter(s, len(s)-tail)
	omitted := s[len(h):t]
	lines := strings.Count(omitted, "\n")
	return h + fmt.Sprintf("\n[… %d bytes, %d lines omitted …]\n", len(omitted), lines) + s[t:], true
}

// cutBefore returns a prefix of s no longer than n bytes, ending after a
// newline when there is one in the last quarter, and never inside a UTF-8
// sequence.
func cutBefore(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i >= n*3/4 {
		return s[:i+1]
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cutAfter returns an index i ≥ n from which s's suffix starts at a line
// start when one is near, and never inside a UTF-8 sequence.
func cutAfter(s string, n int) int {
	if n <= 0 {
		return 0
	}
	rest := len(s) - n
	if i := strings.IndexByte(s[n:], '\n'); i >= 0 && i < rest/4 {
		return n + i + 1
	}
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	return n
}

// truncateLine shortens one line of text to max bytes with a marker.
func truncateLine(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… [line cut: %d more bytes]", len(s)-n)
}

// shorten cuts a one-line summary to about max bytes.
func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max] + "…"
}

// metadata encodes a tool's metadata; the values are plain data.
func metadata(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
