package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Instruction is one instruction file (AGENTS.md, CLAUDE.md, or one named
// in the configuration) as the model reads it.
type Instruction struct {
	// Path is the file, absolute.
	Path string
	// Text is the file's contents under a line naming it: relative to the
	// workspace root when inside it, ~/... under the home directory.
	Text string
}

// maxInstructionFile bounds one instruction file in the prompt; every byte
// is paid on every request. Longer files are cut at a line break, with a
// note telling the model how to read the rest.
const maxInstructionFile = 64 << 10

// instructionFile returns the instruction file of dir: AGENTS.md, or
// CLAUDE.md when there is no AGENTS.md. "" when there is neither.
func instructionFile(dir string) string {
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// loadInstruction reads an instruction file and frames it for the model
// under name. cut reports that the file was longer than the prompt takes.
func loadInstruction(path, name string) (in Instruction, cut bool, err error) {
	text, err := readText(path, maxMarkdownFile)
	if err != nil {
		return Instruction{}, false, err
	}
	text = strings.TrimSpace(strings.TrimPrefix(text, "\uFEFF"))
	if len(text) > maxInstructionFile {
		keep := text[:runeCut(text, maxInstructionFile)]
		if i := strings.LastIndexByte(keep, '\n'); i > 0 {
			keep = keep[:i]
		}
		text = keep + fmt.Sprintf("\n\n[%s is cut here: %d more bytes; read the file for the rest]", name, len(text)-len(keep))
		cut = true
	}
	return Instruction{Path: path, Text: "Instructions from " + name + ":\n\n" + text}, cut, nil
}

// DirInstructions returns the instruction files that apply to path (a file
// or directory the turn touched) besides the workspace root's own, which
// the system prompt holds: AGENTS.md (or CLAUDE.md when a directory has no
// AGENTS.md) in each directory below root down to path's directory, the
// nearest last. The loop adds each directory's file once per session. A
// relative path is taken under root; a path outside root has none.
// Unreadable files are skipped.
func DirInstructions(root, path string) []Instruction {
	if root == "" {
		return nil
	}
	root = filepath.Clean(root)
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	path = filepath.Clean(path)
	dir := path
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		dir = filepath.Dir(path)
	}
	rel, ok := within(root, dir)
	if !ok || rel == "." {
		return nil
	}
	var out []Instruction
	cur := root
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, seg)
		f := instructionFile(cur)
		if f == "" {
			continue
		}
		in, _, err := loadInstruction(f, shortPath(root, "", f))
		if err == nil {
			out = append(out, in)
		}
	}
	return out
}

// Limits on a ** instruction pattern, which walks a directory tree.
const (
	maxPatternWalk  = 20000
	maxPatternFiles = 50
)

// instructionPaths lists the files an instruction pattern from the
// configuration names, sorted. A pattern is a path or a glob (*, ?, [...],
// and ** for any number of directories), relative to root, under ~/, or
// absolute.
func instructionPaths(root, home, pattern string) ([]string, error) {
	p := pattern
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return nil, errors.New("it starts with ~ but the home directory is unknown")
		}
		p = filepath.Join(home, p[1:])
	case !filepath.IsAbs(p):
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	if !strings.ContainsAny(p, "*?[") {
		if _, err := os.Stat(p); err != nil {
			return nil, err
		}
		return []string{p}, nil
	}
	if !strings.Contains(p, "**") {
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("bad pattern: %w", err)
		}
		return regularFiles(matches), nil
	}
	return walkPattern(p)
}

// walkPattern expands a pattern holding **: it walks the directory before
// the first wildcard and matches every file below it.
func walkPattern(p string) ([]string, error) {
	segs := strings.Split(filepath.ToSlash(p), "/")
	i := slices.IndexFunc(segs, func(s string) bool { return strings.ContainsAny(s, "*?[") })
	base := filepath.FromSlash(strings.Join(segs[:i], "/"))
	if base == "" {
		base = string(filepath.Separator)
	}
	pat := segs[i:]
	for _, s := range pat {
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("bad pattern: %w", err)
		}
	}
	var out []string
	walked := 0
	err := filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == base {
				return err
			}
			return nil
		}
		if walked++; walked > maxPatternWalk {
			return fmt.Errorf("more than %d entries under %s; narrow the pattern", maxPatternWalk, base)
		}
		if e.IsDir() {
			if n := e.Name(); p != base && (n == ".git" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(base, p)
		if matchSegments(pat, strings.Split(filepath.ToSlash(rel), "/")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return regularFiles(out), nil
}

// matchSegments matches a path's segments against a pattern's, where "**"
// matches any number of segments.
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			for k := 0; k <= len(name); k++ {
				if matchSegments(pat[1:], name[k:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func regularFiles(paths []string) []string {
	var out []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
