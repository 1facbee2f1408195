package prompt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// ExpandOptions is what expanding a command may use.
type ExpandOptions struct {
	// Root is the workspace root, absolute; @paths are relative to it.
	// Required when the template has an @path.
	Root string
	// Run runs the shell command of a !`cmd` and returns its output
	// (stdout and stderr together). darman's loop wires it to the bash
	// permission and the bash tool. An error stops the expansion, so return
	// one for a refused permission, a command that could not start or timed
	// out; a command that ran and exited non-zero is usually better returned
	// as output (failing tests are what a "fix the tests" command wants to
	// show). Nil means commands cannot run: a template with !`cmd` fails.
	Run func(ctx context.Context, command string) (string, error)
	// ReadFile reads the file of an @path, given absolute and cleaned:
	// the session's workspace, so an editor's unsaved buffer is what is
	// inlined. Nil reads from disk. Either way a file that resolves, after
	// symbolic links, outside Root is refused (ErrOutsideWorkspace) before
	// it is read.
	ReadFile func(ctx context.Context, path string) ([]byte, error)
	// Attachable checks that an @path's file (absolute, cleaned, inside
	// Root) may go to the model before it is read, and says why not:
	// darman's loop refuses secrets there (complete.Attachable). Nil
	// attaches nothing: every @path fails the expansion.
	Attachable func(root, path string) (string, error)
}

// Limits on what expansion inlines.
const (
	maxInlineFile   = 256 << 10
	maxInlineOutput = 64 << 10
	// maxExpanded bounds the whole message, against many @paths.
	maxExpanded = 2 << 20
)

// ErrOutsideWorkspace is returned (wrapped) for an @path that leaves the
// workspace.
var ErrOutsideWorkspace = errors.New("outside the workspace")

// Expand turns the command into the user message it stands for, given the
// text typed after the command's name. In order:
//
//  1. $ARGUMENTS becomes args (trimmed) and $1..$N its words, split as
//     SplitArgs does. The highest-numbered placeholder in the template
//     takes its word and all the words after it, joined by single spaces,
//     so "/commit $1" given "fix the parser" sees all three words and a
//     template need not guess how many words it gets. A placeholder with
//     no word becomes "". $0, and a $ before anything but ARGUMENTS or a
//     digit, stay as written.
//  2. The result is scanned once, left to right, so what is inlined is
//     never expanded again:
//     - !`cmd` is replaced by the command's output, trimmed of trailing
//     newlines (capped at 64 KiB), run through opts.Run;
//     - @path, where @ starts a word, is replaced by the file's path and
//     its contents in a Markdown fence, on lines of their own. The path is
//     relative to Root; trailing punctuation (".,;:!?)]}'\"") is not part
//     of it. A missing, binary or over-256 KiB file fails the expansion,
//     and so does one opts.Attachable refuses (every one, when it is
//     nil).
//     - \@ and \!` write a literal @ and !` (the backslash is dropped).
//
// Because arguments are substituted first, an @path or !`cmd` the user
// types in the arguments is expanded too; a !`cmd` built from arguments is
// still subject to whatever opts.Run checks. The error names the command
// and the part that failed.
func (c Command) Expand(ctx context.Context, args string, opts ExpandOptions) (string, error) {
	if c.Untrusted {
		opts.Run = func(context.Context, string) (string, error) { return "", ErrUntrusted }
	}
	out, err := expand(ctx, substituteArgs(c.Template, args), opts)
	if err != nil {
		return "", fmt.Errorf("command /%s: %w", c.Name, err)
	}
	return out, nil
}

// shellLines are the commands of the !`cmd` in s, as expand finds them.
func shellLines(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && strings.HasPrefix(s[i+1:], "!`"):
			i += 2
		case strings.HasPrefix(s[i:], "!`"):
			end := strings.IndexAny(s[i+2:], "`\n")
			if end > 0 && s[i+2+end] == '`' {
				out = append(out, s[i+2:i+2+end])
				i += 2 + end
			}
		}
	}
	return out
}

func expand(ctx context.Context, s string, opts ExpandOptions) (string, error) {
	var b bytes.Buffer
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], "@!\\")
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+j])
		i += j
		switch {
		case s[i] == '\\' && (strings.HasPrefix(s[i+1:], "@") || strings.HasPrefix(s[i+1:], "!`")):
			b.WriteByte(s[i+1])
			i += 2
		case strings.HasPrefix(s[i:], "!`"):
			end := strings.IndexAny(s[i+2:], "`\n")
			if end <= 0 || s[i+2+end] != '`' {
				b.WriteByte('!')
				i++
				continue
			}
			command := s[i+2 : i+2+end]
			outp, err := runInline(ctx, command, opts)
			if err != nil {
				return "", err
			}
			b.WriteString(outp)
			i += 2 + end + 1
		case s[i] == '@' && startsWord(s, i) && i+1 < len(s) && !isSpaceByte(s[i+1]):
			end := i + 1
			for end < len(s) && !isSpaceByte(s[end]) {
				end++
			}
			ref := strings.TrimRight(s[i+1:end], ".,;:!?)]}'\"")
			if ref == "" {
				b.WriteByte('@')
				i++
				continue
			}
			block, err := inlineFile(ctx, ref, opts)
			if err != nil {
				return "", err
			}
			// The block goes on lines of its own.
			for b.Len() > 0 && (b.Bytes()[b.Len()-1] == ' ' || b.Bytes()[b.Len()-1] == '\t') {
				b.Truncate(b.Len() - 1)
			}
			if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
				b.WriteByte('\n')
			}
			b.WriteString(block)
			i += 1 + len(ref)
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i < len(s) && s[i] != '\n' && s[i] != '\r' {
				b.WriteByte('\n')
			}
		default:
			b.WriteByte(s[i])
			i++
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if b.Len() > maxExpanded {
			return "", fmt.Errorf("the expanded message is over %d MiB; inline fewer or smaller files", maxExpanded>>20)
		}
	}
	return b.String(), nil
}

// startsWord reports whether s[i] begins a word: at the start, after white
// space, or after an opening bracket or quote.
func startsWord(s string, i int) bool {
	if i == 0 {
		return true
	}
	return isSpaceByte(s[i-1]) || strings.IndexByte("([{\"'", s[i-1]) >= 0
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func runInline(ctx context.Context, command string, opts ExpandOptions) (string, error) {
	if opts.Run == nil {
		return "", fmt.Errorf("!`%s`: running commands is not available here", command)
	}
	out, err := opts.Run(ctx, command)
	if errors.Is(err, ErrUntrusted) {
		return "", fmt.Errorf("!`%s` was not run: %w (darman trust, or darman run --trust)", command, err)
	}
	if err != nil {
		return "", fmt.Errorf("!`%s` failed: %w", command, err)
	}
	out = strings.TrimRight(out, "\r\n")
	if len(out) > maxInlineOutput {
		keep := out[:runeCut(out, maxInlineOutput)]
		out = keep + fmt.Sprintf("\n[output truncated: %d more bytes]", len(out)-len(keep))
	}
	return out, nil
}

// inlineFile returns the fenced block that replaces @ref.
func inlineFile(ctx context.Context, ref string, opts ExpandOptions) (string, error) {
	if opts.Root == "" && !filepath.IsAbs(ref) {
		return "", fmt.Errorf("@%s: no workspace root to find it in", ref)
	}
	path := filepath.FromSlash(ref)
	if !filepath.IsAbs(path) {
		path = filepath.Join(opts.Root, path)
	}
	path = filepath.Clean(path)
	if checkInside(opts.Root, path) == nil {
		// Inside, it must not be a secret either: a command file (a
		// workspace's own) naming @.env would send the user's keys. (One
		// outside is refused as it is read.)
		if opts.Attachable == nil {
			return "", fmt.Errorf("@%s: files cannot be attached here; write \\@ for a literal @", ref)
		}
		if _, err := opts.Attachable(opts.Root, path); err != nil {
			return "", fmt.Errorf("@%s: %w", ref, err)
		}
	}
	var data []byte
	var err error
	if opts.ReadFile != nil {
		if err = checkInside(opts.Root, path); err == nil {
			data, err = opts.ReadFile(ctx, path)
		}
		if err == nil && len(data) > maxInlineFile {
			err = fmt.Errorf("%w: %d bytes, more than the %d inlined", errTooLarge, len(data), maxInlineFile)
		}
		if err == nil && isBinary(data) {
			err = errors.New("binary file, not text")
		}
	} else {
		data, err = readWorkspaceFile(opts.Root, path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("@%s: no such file (looked for %s); fix the path, or write \\@ for a literal @", ref, path)
	case errors.Is(err, errTooLarge):
		return "", fmt.Errorf("@%s: %w; name the file without @ and let the agent read the part it needs", ref, err)
	case err != nil:
		return "", fmt.Errorf("@%s: %w", ref, err)
	}
	return fenced(ref, string(data)), nil
}

// readWorkspaceFile reads path from the disk; it must resolve inside
// root.
func readWorkspaceFile(root, path string) ([]byte, error) {
	if err := checkInside(root, path); err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	text, err := readText(real, maxInlineFile)
	if err != nil {
		return nil, err
	}
	return []byte(text), nil
}

// checkInside fails unless path resolves, after symbolic links, inside
// root. A file that does not exist on the disk (an editor's new, unsaved
// buffer) is judged by its directory.
func checkInside(root, path string) error {
	if root == "" {
		return ErrOutsideWorkspace
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		dir, derr := filepath.EvalSymlinks(filepath.Dir(path))
		if derr != nil {
			return err
		}
		real, err = filepath.Join(dir, filepath.Base(path)), nil
	}
	if err != nil {
		return err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("the workspace root: %w", err)
	}
	if _, ok := within(realRoot, real); !ok {
		return fmt.Errorf("%w (it resolves to %s); only files inside the workspace may be inlined", ErrOutsideWorkspace, real)
	}
	return nil
}

// fenced puts a file's contents in a Markdown fence longer than any run of
// backticks inside, under a line naming the file.
func fenced(name, content string) string {
	longest, run := 0, 0
	for i := 0; i < len(content); i++ {
		if content[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	content = strings.TrimSuffix(content, "\n")
	return name + ":\n" + fence + "\n" + content + "\n" + fence
}
