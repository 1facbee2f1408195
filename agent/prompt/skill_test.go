package prompt_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/prompt"
)

// skillTool is the interface the skill tool takes; Skills must satisfy it.
type skillTool interface {
	Skill(name string) (body, dir string, ok bool)
	Names() []string
}

var _ skillTool = (*prompt.Skills)(nil)

func skillFile(name, description, body string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\n" + body
}

func TestLoadSkills(t *testing.T) {
	f := newFixture(t)
	f.write(".darman/skill/release/SKILL.md", skillFile("release", "Cut a release: changelog, tag, publish.", "\n# Release\n\nRun scripts/release.sh.\n"))
	f.write(".darman/skill/release/scripts/release.sh", "#!/bin/sh\n")
	f.write(filepath.Join(f.userDir(), "skill", "release", "SKILL.md"), skillFile("release", "user release", "user"))
	f.write(filepath.Join(f.userDir(), "skill", "notes", "SKILL.md"), skillFile("notes", "Keep meeting notes", "user notes"))
	f.write(".claude/skills/notes/SKILL.md", skillFile("notes", "claude notes", "claude notes"))
	f.write(".claude/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: >\n  Read, fill and merge PDF files.\n  Use when the user mentions PDFs.\nallowed-tools: [Read, Bash]\n---\nUse pdftotext.\n")
	f.write(filepath.Join(f.home, ".claude", "skills", "home-skill", "SKILL.md"), skillFile("home-skill", "from ~/.claude", "home"))

	s := prompt.LoadSkills(f.dirs(), nil)
	if len(s.Problems) > 0 {
		t.Errorf("problems:\n%s", problemsText(s.Problems))
	}
	want := []string{"home-skill", "notes", "pdf", "release"}
	if got := s.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names = %v; want %v", got, want)
	}
	list := s.List()
	if len(list) != 4 || list[2].Description != "Read, fill and merge PDF files. Use when the user mentions PDFs." || list[2].Origin != prompt.Claude {
		t.Errorf("List()[2] = %+v", list[2])
	}
	if list[1].Description != "Keep meeting notes" || list[1].Origin != prompt.User {
		t.Errorf("notes: want the user's over .claude's, got %+v", list[1])
	}

	body, dir, ok := s.Skill("release")
	if !ok || body != "# Release\n\nRun scripts/release.sh." || dir != filepath.Join(f.root, ".darman", "skill", "release") {
		t.Errorf("Skill(release) = %q, %q, %v", body, dir, ok)
	}
	if _, err := os.Stat(filepath.Join(dir, "scripts", "release.sh")); err != nil {
		t.Errorf("the skill's dir does not hold its files: %v", err)
	}

	// Bodies are read when asked for, so an edit shows without reloading.
	f.write(".darman/skill/release/SKILL.md", skillFile("release", "Cut a release", "new body"))
	if body, _, _ := s.Skill("release"); body != "new body" {
		t.Errorf("after an edit Skill(release) = %q; want the new body", body)
	}
	if _, _, ok := s.Skill("unknown"); ok {
		t.Errorf("Skill(unknown) ok")
	}

	logger, logs := logBuffer()
	s = prompt.LoadSkills(f.dirs(), logger)
	if err := os.Remove(filepath.Join(f.root, ".darman", "skill", "release", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.Skill("release"); ok || !strings.Contains(logs.String(), "cannot read skill") {
		t.Errorf("a deleted skill: ok %v, logs %q", ok, logs)
	}

	var shadowed []string
	for _, sh := range s.Shadowed {
		shadowed = append(shadowed, sh.Name+" "+sh.Path[len(f.home)-len("home"):]+" by "+sh.By[len(f.home)-len("home"):])
	}
	wantShadowed := []string{
		"release home/.config/darman/skill/release/SKILL.md by repo/.darman/skill/release/SKILL.md",
		"notes repo/.claude/skills/notes/SKILL.md by home/.config/darman/skill/notes/SKILL.md",
	}
	if !slices.Equal(shadowed, wantShadowed) {
		t.Errorf("shadowed:\n%s\nwant:\n%s", strings.Join(shadowed, "\n"), strings.Join(wantShadowed, "\n"))
	}
}

func TestLoadSkillsBadFrontmatter(t *testing.T) {
	f := newFixture(t)
	cases := map[string]string{
		"no-frontmatter":   "# Just Markdown\n",
		"no-name":          "---\ndescription: does things\n---\nbody",
		"no-description":   "---\nname: no-description\n---\nbody",
		"empty":            "---\n---\nbody",
		"unclosed":         "---\nname: unclosed\ndescription: x\n",
		"bad-name":         skillFile("Bad Name!", "x", "body"),
		"long-name":        skillFile(strings.Repeat("n", 65), "x", "body"),
		"not-key-value":    "---\nname: x\njust words\n---\n",
		"blank-desc":       "---\nname: blank-desc\ndescription: \"  \"\n---\n",
		"unclosed-quote":   "---\nname: q\ndescription: \"never closed\n---\n",
		"dangling-indent":  "---\n  name: x\n---\n",
		"trailing-garbage": "---\nname: 'x' y\ndescription: d\n---\n",
	}
	for dir, content := range cases {
		f.write(filepath.Join(".darman", "skill", dir, "SKILL.md"), content)
	}
	f.write(".darman/skill/no-skill-md/README.md", "x")
	f.write(".darman/skill/good/SKILL.md", skillFile("good", "works", "body"))
	f.write(".darman/skill/stray-file.md", "not a skill directory")

	s := prompt.LoadSkills(f.dirs(), nil)
	if got := s.Names(); !slices.Equal(got, []string{"good"}) {
		t.Errorf("Names = %v; want only good", got)
	}
	probs := problemsText(s.Problems)
	for dir, want := range map[string]string{
		"no-frontmatter":   "no front matter: SKILL.md must start with a --- block giving name and description",
		"no-name":          "the front matter has no name; add name: no-name",
		"no-description":   "the front matter has no description",
		"empty":            "the front matter has no name and no description; both are required",
		"unclosed":         "no closing --- line",
		"bad-name":         `the skill name "Bad Name!" has ' '`,
		"long-name":        "is longer than 64 characters",
		"not-key-value":    `line 3: "just words" is not a key: value line`,
		"blank-desc":       "the front matter has no description",
		"unclosed-quote":   "line 3: the quoted value has no closing \"",
		"dangling-indent":  "line 2: indented line",
		"trailing-garbage": "line 2: unexpected \"y\" after the closing quote",
		"no-skill-md":      "the skill directory has no SKILL.md",
	} {
		path := filepath.Join(f.root, ".darman", "skill", dir, "SKILL.md")
		i := slices.IndexFunc(s.Problems, func(p prompt.Problem) bool { return p.Path == path })
		if i < 0 || !strings.Contains(s.Problems[i].Err.Error(), want) {
			t.Errorf("no problem for %s saying %q:\n%s", dir, want, probs)
		}
	}
	if len(s.Problems) != len(cases)+1 {
		t.Errorf("%d problems; want %d:\n%s", len(s.Problems), len(cases)+1, probs)
	}
}

func TestSkillsInPrompt(t *testing.T) {
	f := newFixture(t)
	f.write(".darman/skill/b/SKILL.md", skillFile("b", "second "+strings.Repeat("long ", 300), "x"))
	f.write(".darman/skill/a/SKILL.md", skillFile("a", "first", "x"))
	opts := f.options()
	opts.Skills = prompt.LoadSkills(f.dirs(), nil).List()
	p := f.build(opts)
	var list string
	for _, part := range p.Parts {
		if part.Kind == prompt.SkillList {
			list = part.Text
		}
	}
	if !strings.HasPrefix(list, "Skills (load one with the skill tool when it fits the task):\n- a: first\n- b: second long") {
		t.Errorf("skills part:\n%s", list)
	}
	if len(list) > 1200 || !strings.HasSuffix(list, "…") {
		t.Errorf("a long description is not cut: %d bytes", len(list))
	}
}
