package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Skill is a skill as the system prompt lists it. Its body is read only
// when the model asks for it (Skills.Skill).
type Skill struct {
	Name string
	// Description says when to use the skill, on one line.
	Description string
	// Path is the SKILL.md file, absolute.
	Path   string
	Origin Origin
}

// Skills is the set of skills found for a workspace. The list does not
// change after LoadSkills returns; bodies are read from disk on each call to
// Skill. Safe for concurrent use.
type Skills struct {
	byName map[string]Skill
	names  []string
	logger *slog.Logger
	// Shadowed lists the skills hidden by another of the same name.
	Shadowed []Shadowed
	// Problems lists the skills that were not loaded and why.
	Problems []Problem
}

// maxSkillName bounds a skill's name, as the Agent Skills format does.
const maxSkillName = 64

// LoadSkills finds the skills of a workspace: every <dir>/SKILL.md under
// .darman/skill/ in the project directories (nearest first), skill/ in the
// user directory, then .claude/skills/ in the project directories and the
// home directory, the first of a name winning. SKILL.md must open with
// front matter giving name (letters, digits, '.', '_', '-'; at most 64)
// and description; a skill without them is reported in Problems, not
// loaded. logger (nil discards) hears about bodies that cannot be read
// later.
func LoadSkills(d Dirs, logger *slog.Logger) *Skills {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Skills{byName: map[string]Skill{}, logger: logger}
	for _, p := range d.places(filepath.Join(".darman", "skill"), "skill", filepath.Join(".claude", "skills")) {
		if fi, err := os.Stat(p.dir); err != nil || !fi.IsDir() {
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.Problems = append(s.Problems, Problem{Path: p.dir, Err: err})
			}
			continue
		}
		entries, err := os.ReadDir(p.dir)
		if err != nil {
			s.Problems = append(s.Problems, Problem{Path: p.dir, Err: err})
			continue
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			dir := filepath.Join(p.dir, e.Name())
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
			path := filepath.Join(dir, "SKILL.md")
			sk, err := readSkill(path, p.origin)
			if err != nil {
				s.Problems = append(s.Problems, Problem{Path: path, Err: err})
				continue
			}
			if prev, ok := s.byName[sk.Name]; ok {
				s.Shadowed = append(s.Shadowed, Shadowed{Name: sk.Name, Path: path, By: prev.Path})
				continue
			}
			s.byName[sk.Name] = sk
			s.names = append(s.names, sk.Name)
		}
	}
	slices.Sort(s.names)
	return s
}

func readSkill(path string, origin Origin) (Skill, error) {
	text, err := readText(path, maxMarkdownFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Skill{}, errors.New("the skill directory has no SKILL.md")
	}
	if err != nil {
		return Skill{}, err
	}
	fm, _, err := splitFrontmatter(text)
	switch {
	case err != nil:
		return Skill{}, err
	case fm == nil:
		return Skill{}, errors.New("no front matter: SKILL.md must start with a --- block giving name and description")
	}
	name := strings.TrimSpace(fm["name"])
	desc := oneLine(fm["description"])
	switch {
	case name == "" && desc == "":
		return Skill{}, errors.New("the front matter has no name and no description; both are required")
	case name == "":
		return Skill{}, fmt.Errorf("the front matter has no name; add name: %s", filepath.Base(filepath.Dir(path)))
	case desc == "":
		return Skill{}, errors.New("the front matter has no description; add one saying when to use the skill")
	}
	if err := checkSkillName(name); err != nil {
		return Skill{}, err
	}
	return Skill{Name: name, Description: desc, Path: path, Origin: origin}, nil
}

func checkSkillName(name string) error {
	if len(name) > maxSkillName {
		return fmt.Errorf("the skill name %q is longer than %d characters", truncateText(name, 20), maxSkillName)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return fmt.Errorf("the skill name %q has %q; use letters, digits, '-', '_' and '.'", name, r)
		}
	}
	return nil
}

// Skill reads the body of the skill called name: the text after its front
// matter, and the directory that holds its other files. ok is false for an
// unknown name, or when the file can no longer be read (logged).
func (s *Skills) Skill(name string) (body, dir string, ok bool) {
	sk, found := s.byName[name]
	if !found {
		return "", "", false
	}
	text, err := readText(sk.Path, maxMarkdownFile)
	if err == nil {
		_, body, err = splitFrontmatter(text)
	}
	if err != nil {
		s.logger.Warn("cannot read skill", "skill", name, "path", sk.Path, "err", err)
		return "", "", false
	}
	return strings.TrimSpace(body), filepath.Dir(sk.Path), true
}

// Names returns the skills' names, sorted.
func (s *Skills) Names() []string {
	return slices.Clone(s.names)
}

// List returns the skills sorted by name.
func (s *Skills) List() []Skill {
	out := make([]Skill, len(s.names))
	for i, n := range s.names {
		out[i] = s.byName[n]
	}
	return out
}
