package prompt

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/internal/config"
)

//go:embed system.md
var systemMD string

// system is darman's own instructions; its sections mention only the tools
// a turn offers (sections.go). It is parsed on first use rather than when
// any darman command starts.
var system = sync.OnceValues(func() ([]section, error) {
	return parseSections("system.md", systemMD)
})

// Options is what Build assembles a system prompt from.
type Options struct {
	// Root is the workspace root, an absolute path to a directory. Required.
	Root string
	// Tools are the names of the tools offered to the model; darman's
	// instructions mention only these, and the skills are listed only when
	// "skill" is one. Nil means no tools.
	Tools []string
	// Model is the model's ID, stated among the environment facts; ""
	// leaves it out.
	Model string
	// Now gives the date; the zero value means time.Now().
	Now time.Time
	// LookupEnv reads the environment (HOME, XDG_CONFIG_HOME); nil means
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// UserDir is darman's per-user config directory, which holds the user's
	// global AGENTS.md; "" means config.UserDir(LookupEnv).
	UserDir string
	// Instructions are extra instruction files from the configuration:
	// paths or globs (*, ?, [...], and ** for any depth), relative to Root,
	// under ~/, or absolute. A path that names no file is a Problem.
	Instructions []string
	// Skills are listed by name and description (Skills.List gives them).
	Skills []Skill
	// Git returns Root's branch and its git status --porcelain lines. An
	// error wrapping ErrNotRepository says Root is not in a repository; any
	// other error leaves the git facts out (and is logged). Nil means
	// GitStatus on Root, which runs git with a 2 s timeout.
	Git func(ctx context.Context) (branch, status string, err error)
	// Logger hears about files skipped and git failures; nil discards.
	Logger *slog.Logger
}

// PartKind says what a part of the system prompt holds.
type PartKind string

const (
	// Base is darman's own instructions.
	Base PartKind = "base"
	// Global is the user's instructions for every workspace:
	// <UserDir>/AGENTS.md, or ~/.claude/CLAUDE.md when there is none.
	Global PartKind = "global"
	// ProjectInstructions is AGENTS.md (or CLAUDE.md when a directory has no
	// AGENTS.md) in the workspace root and its parents up to the repository
	// root, one part per file, the root's last.
	ProjectInstructions PartKind = "project"
	// Extra is an instruction file named in the configuration.
	Extra PartKind = "extra"
	// SkillList lists the skills the skill tool can load.
	SkillList PartKind = "skills"
	// Environment is the facts of the moment: workspace root, OS, date,
	// model, git branch and status.
	Environment PartKind = "environment"
)

// Part is one piece of the system prompt.
type Part struct {
	Kind PartKind
	// Path is the instruction file, for Global, ProjectInstructions and
	// Extra parts.
	Path string
	Text string
}

// Prompt is a system prompt, whole and in parts.
type Prompt struct {
	// Parts are in the order they are sent. The stable ones come first.
	Parts []Part
	// Stable is how many leading Parts depend only on darman's
	// instructions, the tool set, instruction files and skills, not on the
	// date, the model or the repository's state: a provider cache
	// breakpoint after Parts[Stable-1] survives from one turn to the next.
	Stable int
	// Problems are instruction files that could not be read, or were cut
	// because they are longer than 64 KiB, and configured patterns that
	// match nothing.
	Problems []Problem
}

// partSep is what joins the parts in Text.
const partSep = "\n\n"

// Text is the whole system prompt.
func (p Prompt) Text() string {
	texts := make([]string, len(p.Parts))
	for i, part := range p.Parts {
		texts[i] = part.Text
	}
	return strings.Join(texts, partSep)
}

// Tokens estimates the prompt's size in tokens (see EstimateTokens).
func (p Prompt) Tokens() int { return EstimateTokens(p.Text()) }

// EstimateTokens estimates how many tokens s costs as one byte in four,
// rounded up: close for English prose and code with common tokenizers,
// pessimistic for long identifiers, optimistic for non-Latin scripts. Good
// for budgets and for tracking size over time, not for billing.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// Build assembles the system prompt for a turn. It reads the instruction
// files and runs git each time; the environment facts say they are taken
// at the start of the session, so a loop that wants the provider's prompt
// cache to hold across turns builds once per session and builds again only
// when the tools, instruction files or skills change.
//
// It fails only when Root is not a directory or ctx is done; files it
// cannot read are reported in Prompt.Problems.
func Build(ctx context.Context, opts Options) (Prompt, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if !filepath.IsAbs(opts.Root) {
		return Prompt{}, fmt.Errorf("workspace root %q is not an absolute path", opts.Root)
	}
	root := filepath.Clean(opts.Root)
	if fi, err := os.Stat(root); err != nil {
		return Prompt{}, fmt.Errorf("workspace root: %w", err)
	} else if !fi.IsDir() {
		return Prompt{}, fmt.Errorf("workspace root %s is not a directory", root)
	}
	lookupEnv := opts.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	homeDir := home(lookupEnv)
	userDir := opts.UserDir
	if userDir == "" {
		if d, err := config.UserDir(lookupEnv); err == nil {
			userDir = d
		}
	}

	b := &builder{root: root, home: homeDir, logger: logger, seen: map[string]bool{}}
	base, err := baseInstructions(opts.Tools)
	if err != nil {
		return Prompt{}, err
	}
	b.parts = append(b.parts, Part{Kind: Base, Text: base})
	b.global(userDir)
	b.project()
	for _, pattern := range opts.Instructions {
		b.extra(pattern)
	}
	if slices.Contains(opts.Tools, "skill") && len(opts.Skills) > 0 {
		b.parts = append(b.parts, Part{Kind: SkillList, Text: skillList(opts.Skills)})
	}
	stable := len(b.parts)
	if err := ctx.Err(); err != nil {
		return Prompt{}, err
	}
	env := environment(ctx, opts, root, logger)
	if err := ctx.Err(); err != nil {
		return Prompt{}, err
	}
	b.parts = append(b.parts, Part{Kind: Environment, Text: env})
	return Prompt{Parts: b.parts, Stable: stable, Problems: b.problems}, nil
}

func baseInstructions(tools []string) (string, error) {
	sections, err := system()
	if err != nil {
		return "", fmt.Errorf("darman's %w", err)
	}
	var sb strings.Builder
	render(&sb, sections, tools)
	return strings.TrimSpace(sb.String()), nil
}

// builder collects instruction parts, each file once.
type builder struct {
	root, home string
	logger     *slog.Logger
	parts      []Part
	problems   []Problem
	seen       map[string]bool
}

// add reads one instruction file into a part. A file already in the prompt
// is skipped.
func (b *builder) add(kind PartKind, path string) {
	b.addNamed(kind, path, shortPath(b.root, b.home, path))
}

// addNamed is add with the name the model reads the file under.
func (b *builder) addNamed(kind PartKind, path, name string) {
	key := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		key = real
	}
	if b.seen[key] {
		return
	}
	b.seen[key] = true
	in, cut, err := loadInstruction(path, name)
	if err != nil {
		b.problem(path, err)
		return
	}
	if cut {
		b.problem(path, fmt.Errorf("longer than %d bytes; only the start is in the prompt", maxInstructionFile))
	}
	b.parts = append(b.parts, Part{Kind: kind, Path: path, Text: in.Text})
}

func (b *builder) problem(path string, err error) {
	b.logger.Warn("instruction file skipped or cut", "path", path, "err", err)
	b.problems = append(b.problems, Problem{Path: path, Err: err})
}

func (b *builder) global(userDir string) {
	if userDir != "" {
		if p := filepath.Join(userDir, "AGENTS.md"); exists(p) {
			b.add(Global, p)
			return
		}
	}
	if b.home != "" {
		if p := filepath.Join(b.home, ".claude", "CLAUDE.md"); exists(p) {
			b.add(Global, p)
		}
	}
}

func (b *builder) project() {
	dirs := Dirs{Root: b.root}.projectDirs()
	slices.Reverse(dirs)
	for _, dir := range dirs {
		if f := instructionFile(dir); f != "" {
			// Files in the parents are named from the workspace
			// (../AGENTS.md), which also says where they sit.
			name, err := filepath.Rel(b.root, f)
			if err != nil {
				name = f
			}
			b.addNamed(ProjectInstructions, f, filepath.ToSlash(name))
		}
	}
}

func (b *builder) extra(pattern string) {
	paths, err := instructionPaths(b.root, b.home, pattern)
	switch {
	case errors.Is(err, os.ErrNotExist):
		b.problem(pattern, errors.New("no such file; fix the path in the configuration's instructions"))
	case err != nil:
		b.problem(pattern, err)
	case len(paths) == 0:
		b.problem(pattern, errors.New("the pattern matches no file"))
	}
	if len(paths) > maxPatternFiles {
		b.problem(pattern, fmt.Errorf("the pattern matches %d files; only the first %d are read", len(paths), maxPatternFiles))
		paths = paths[:maxPatternFiles]
	}
	for _, p := range paths {
		b.add(Extra, p)
	}
}

// maxSkillDescription bounds one skill's line in the prompt.
const maxSkillDescription = 1024

func skillList(skills []Skill) string {
	var sb strings.Builder
	sb.WriteString("Skills (load one with the skill tool when it fits the task):")
	for _, s := range skills {
		sb.WriteString("\n- ")
		sb.WriteString(s.Name)
		sb.WriteString(": ")
		sb.WriteString(truncateText(oneLine(s.Description), maxSkillDescription))
	}
	return sb.String()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Caps on the git status shown.
const (
	maxStatusLines = 20
	maxStatusLine  = 200
)

// environment writes the facts of the moment.
func environment(ctx context.Context, opts Options, root string, logger *slog.Logger) string {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	var sb strings.Builder
	sb.WriteString("Environment at the start of the session:\n")
	fmt.Fprintf(&sb, "- Workspace root: %s\n", root)
	fmt.Fprintf(&sb, "- OS: %s\n", runtime.GOOS)
	fmt.Fprintf(&sb, "- Date: %s\n", now.Format("Monday 2006-01-02"))
	if opts.Model != "" {
		fmt.Fprintf(&sb, "- Model: %s\n", opts.Model)
	}
	git := opts.Git
	if git == nil {
		git = func(ctx context.Context) (string, string, error) { return GitStatus(ctx, root) }
	}
	branch, status, err := git(ctx)
	switch {
	case errors.Is(err, ErrNotRepository):
		sb.WriteString("- Git: not a repository\n")
	case err != nil:
		logger.Warn("git facts left out", "root", root, "err", err)
	default:
		sb.WriteString(gitFacts(branch, status))
	}
	return strings.TrimRight(sb.String(), "\n")
}

// gitFacts summarises the branch and status in a few lines.
func gitFacts(branch, status string) string {
	var sb strings.Builder
	if branch == "" {
		branch = "unknown"
	}
	var lines []string
	for l := range strings.SplitSeq(status, "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		fmt.Fprintf(&sb, "- Git: branch %s, clean\n", branch)
		return sb.String()
	}
	fmt.Fprintf(&sb, "- Git: branch %s, %d changed %s:\n", branch, len(lines), plural(len(lines), "path", "paths"))
	for _, l := range lines[:min(len(lines), maxStatusLines)] {
		sb.WriteString("  ")
		sb.WriteString(truncateText(l, maxStatusLine))
		sb.WriteByte('\n')
	}
	if n := len(lines) - maxStatusLines; n > 0 {
		fmt.Fprintf(&sb, "  … and %d more\n", n)
	}
	return sb.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
