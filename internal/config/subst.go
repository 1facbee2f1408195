package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxFileSubst bounds what ${file:...} reads, so a mistaken path such as
// /dev/zero fails instead of exhausting memory.
const maxFileSubst = 1 << 20

// substitute expands ${env:NAME} and ${file:path} in every string value of
// the tree, in place. A value that cannot be expanded is reported and
// marked bad so the decoder skips it.
func (l *layer) substitute(path string, n *node) {
	switch n.kind {
	case kindString:
		s, err := l.expand(path, n.text)
		if err != nil {
			l.problem(path, err.Error(), errors.Unwrap(err))
			n.bad = true
			return
		}
		n.text = s
	case kindObject:
		for _, m := range n.fields {
			if path == "" && m.key == "$schema" {
				continue
			}
			l.substitute(keyPath(path, m.key), m.value)
		}
	case kindArray:
		for i, it := range n.items {
			l.substitute(indexPath(path, i), it)
		}
	}
}

func (l *layer) expand(path, s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			// "$${" is a literal "${"; its first "$" is already written.
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return "", fmt.Errorf("%q has no closing }: write ${env:NAME} or ${file:path}, or $${ for a literal ${", s[i:])
		}
		expr := rest[:end]
		value, err := l.expandOne(path, expr)
		if err != nil {
			return "", err
		}
		b.WriteString(value)
		s = rest[end+1:]
	}
}

func (l *layer) expandOne(path, expr string) (string, error) {
	kind, arg, ok := strings.Cut(expr, ":")
	switch {
	case ok && kind == "env":
		if arg == "" {
			return "", errors.New("${env:} needs a variable name, e.g. ${env:ANTHROPIC_API_KEY}")
		}
		v, set := l.dirs.lookup(arg)
		if !set {
			l.warn(path, fmt.Sprintf("environment variable %s is not set; using an empty string", arg))
		}
		return v, nil
	case ok && kind == "file":
		if arg == "" {
			return "", errors.New("${file:} needs a path, e.g. ${file:~/.config/anthropic-key}")
		}
		return l.readSubstFile(arg)
	case !ok && isIdent(expr):
		return "", fmt.Errorf("${%s} is not a substitution: write ${env:%s} for the environment variable, or $${ for a literal ${", expr, expr)
	default:
		return "", fmt.Errorf("${%s} is not a substitution: write ${env:NAME} or ${file:path}, or $${ for a literal ${", expr)
	}
}

func (l *layer) readSubstFile(arg string) (string, error) {
	p, err := l.dirs.resolve(l.dir, arg)
	if err != nil {
		return "", fmt.Errorf("${file:%s}: %w", arg, err)
	}
	// Stat before opening: opening a named pipe would block until a
	// writer appears, and a device such as /dev/zero never ends.
	fi, err := os.Stat(p)
	if err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return "", fmt.Errorf("${file:%s}: %s is a directory", arg, p)
		}
		return "", fmt.Errorf("${file:%s}: %s is not a regular file", arg, p)
	}
	if err != nil {
		return "", fmt.Errorf("${file:%s}: cannot read %s: %w", arg, p, pathErrCause(err))
	}
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("${file:%s}: cannot read %s: %w", arg, p, pathErrCause(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSubst+1))
	if err != nil {
		return "", fmt.Errorf("${file:%s}: cannot read %s: %w", arg, p, pathErrCause(err))
	}
	if len(data) > maxFileSubst {
		return "", fmt.Errorf("${file:%s}: %s is larger than 1 MiB", arg, p)
	}
	return strings.TrimRight(string(data), "\r\n"), nil
}

// pathErrCause drops the *PathError's own "open /path:" prefix when the
// message names the path anyway.
func pathErrCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
