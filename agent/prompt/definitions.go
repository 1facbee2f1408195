package prompt

import "strings"

// What agent/agents needs to read agent files the way commands and skills
// are read: the same front matter, the same places, the same limits.

// Place is one directory searched for definition files, in precedence
// order (see Dirs.Places).
type Place struct {
	Dir    string
	Origin Origin
}

// Places lists where definitions of one kind live, highest precedence
// first: projectSub under each project directory (nearest first), userSub
// under User, then claudeSub under each project directory and Home.
func (d Dirs) Places(projectSub, userSub, claudeSub string) []Place {
	ps := d.places(projectSub, userSub, claudeSub)
	out := make([]Place, len(ps))
	for i, p := range ps {
		out[i] = Place{Dir: p.dir, Origin: p.origin}
	}
	return out
}

// SplitFrontmatter separates a Markdown file's front matter from its body
// (see Frontmatter); a file without front matter has nil fields and the
// whole file as body.
func SplitFrontmatter(src string) (fields Frontmatter, body string, err error) {
	return splitFrontmatter(src)
}

// ParseNested reads a key's nested block (a value Frontmatter kept as its
// dedented text, such as a map under "permission:") as front matter of its
// own.
func ParseNested(text string) (Frontmatter, error) {
	return parseFrontmatter(strings.Split(text, "\n"))
}

// ReadText reads a definition file as commands and skills are read:
// regular text files of at most 1 MiB.
func ReadText(path string) (string, error) { return readText(path, maxMarkdownFile) }

// ShortPath names a file for people: relative to root inside it, ~/...
// under home, absolute otherwise.
func ShortPath(root, home, path string) string { return shortPath(root, home, path) }
