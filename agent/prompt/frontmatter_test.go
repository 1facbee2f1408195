package prompt_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"testing"

	"github.com/darman-dev/darman/agent/prompt"
)

// TestFrontmatter reads front matter through what uses it: command files.
func TestFrontmatter(t *testing.T) {
	cases := []struct {
		file     string
		fields   prompt.Frontmatter
		template string
	}{
		{"---\ndescription: Review code\n---\nbody", prompt.Frontmatter{"description": "Review code"}, "body"},
		{"---\ndescription: Use when: the user asks\n---\n", prompt.Frontmatter{"description": "Use when: the user asks"}, ""},
		{"---\n# a comment\nmodel: openai/gpt-5 # the fast one\n\nagent: plan\n---\nx", prompt.Frontmatter{"model": "openai/gpt-5", "agent": "plan"}, "x"},
		{"---\ndescription: \"Say \\\"hi\\\"\\tnow \\u00e9 \\q\"\n---\n", prompt.Frontmatter{"description": "Say \"hi\"\tnow é \\q"}, ""},
		{"---\ndescription: 'it''s # not a comment'\n---\n", prompt.Frontmatter{"description": "it's # not a comment"}, ""},
		{"---\ndescription: >\n  one\n  two\n\n  three\n---\n", prompt.Frontmatter{"description": "one two\nthree\n"}, ""},
		{"---\ndescription: |\n  a\n   b\n---\n", prompt.Frontmatter{"description": "a\n b\n"}, ""},
		{"---\ndescription: |-\n  a\n\n---\n", prompt.Frontmatter{"description": "a"}, ""},
		{"---\ndescription: |+\n  a\n\n---\n", prompt.Frontmatter{"description": "a\n\n"}, ""},
		{"---\ndescription: >- # folded\n  a\n  b\n---\n", prompt.Frontmatter{"description": "a b"}, ""},
		{"---\ndescription: first\n  second\n    third\n---\n", prompt.Frontmatter{"description": "first second third"}, ""},
		{"---\ndescription:\n  all on\n  the next lines\n---\n", prompt.Frontmatter{"description": "all on the next lines"}, ""},
		{"---\nargument-hint: [message] [--amend]\n---\n", prompt.Frontmatter{"argument-hint": "[message] [--amend]"}, ""},
		{"---\nallowed-tools:\n  - Read\n  - Bash(git *)\n---\n", prompt.Frontmatter{"allowed-tools": "- Read\n- Bash(git *)"}, ""},
		{"---\nmetadata:\n  version: 1\n  owner:\n    name: x\n---\n", prompt.Frontmatter{"metadata": "version: 1\nowner:\n  name: x"}, ""},
		{"---\r\ndescription: crlf\r\n---\r\nbody\r\n", prompt.Frontmatter{"description": "crlf"}, "body\r\n"},
		{"\uFEFF---\ndescription: bom\n---\n\n\nbody", prompt.Frontmatter{"description": "bom"}, "body"},
		{"---  \nagent:\n---   \nbody", prompt.Frontmatter{"agent": ""}, "body"},
		{"---\ndescription: \"a\n  b\n\n  c\"\n---\n", prompt.Frontmatter{"description": "a b\nc"}, ""},
		{"---\n\"argument-hint\": x\n---\n", prompt.Frontmatter{"argument-hint": "x"}, ""},
		{"---\n---\nbody", prompt.Frontmatter{}, "body"},
		{"no front matter\n---\nnot: fields", nil, "no front matter\n---\nnot: fields"},
		{"----\nnot: fields\n---\n", nil, "----\nnot: fields\n---\n"},
	}
	f := newFixture(t)
	for i, c := range cases {
		f.write(filepath.Join(".darman", "command", fmt.Sprintf("c%02d.md", i)), c.file)
	}
	cmds := prompt.LoadCommands(f.dirs())
	if len(cmds.Problems) > 0 {
		t.Fatalf("problems:\n%s", problemsText(cmds.Problems))
	}
	for i, c := range cases {
		cmd, ok := cmds.Get(fmt.Sprintf("c%02d", i))
		if !ok {
			t.Errorf("case %d not loaded", i)
			continue
		}
		if !maps.Equal(cmd.Fields, c.fields) || (cmd.Fields == nil) != (c.fields == nil) {
			t.Errorf("case %d %q:\nfields %q\nwant   %q", i, c.file, cmd.Fields, c.fields)
		}
		if cmd.Template != c.template {
			t.Errorf("case %d %q: template %q; want %q", i, c.file, cmd.Template, c.template)
		}
	}
}
