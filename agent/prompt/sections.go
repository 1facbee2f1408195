package prompt

import (
	"fmt"
	"slices"
	"strings"
)

// system.md is darman's own instructions with sections kept only when a turn
// offers a tool. It is written in the subset of text/template's syntax that
// needs: {{if COND}}, {{else if COND}}, {{else}} and {{end}}, with the
// trim markers ("{{- " and " -}}" remove the white space before and after),
// where COND is `has "tool"` or `or (has "a") (has "b") ...`.
//
// It is not text/template itself because executing a template calls
// methods by name through reflection, and a program that can do that must
// keep every exported method of every type it links: with the provider
// SDKs' thousands of types, that alone was about a third of darman's
// binary. TestSectionsMatchTextTemplate checks the output is the one
// text/template gives.

// section is literal text (branches nil) or a conditional block.
type section struct {
	text     string
	branches []branch
}

// branch is one arm of a conditional block: its body is kept when any of
// the tools is offered; else (always) is the last arm.
type branch struct {
	anyOf  []string
	always bool
	body   []section
}

// parseSections parses src; name is said in errors.
func parseSections(name, src string) ([]section, error) {
	p := sectionParser{name: name, src: src}
	body, end, err := p.parse(0)
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, fmt.Errorf("%s: {{%s}} without {{if}}", name, end)
	}
	return body, nil
}

type sectionParser struct {
	name string
	src  string
	pos  int
	// trimNext says the previous action ended with " -}}": the next text
	// loses its leading white space.
	trimNext bool
}

// parse reads sections until the end of the source or an else/end action at
// depth > 0, which it returns unconsumed in kind ("else", "else if ...",
// "end").
func (p *sectionParser) parse(depth int) ([]section, string, error) {
	var out []section
	for {
		i := strings.Index(p.src[p.pos:], "{{")
		text := p.src[p.pos:]
		if i >= 0 {
			text = p.src[p.pos : p.pos+i]
		}
		if p.trimNext {
			text = strings.TrimLeft(text, spaceChars)
			p.trimNext = false
		}
		if i < 0 {
			p.pos = len(p.src)
			if text != "" {
				out = append(out, section{text: text})
			}
			if depth > 0 {
				return nil, "", fmt.Errorf("%s: {{if}} without {{end}}", p.name)
			}
			return out, "", nil
		}
		start := p.pos + i
		j := strings.Index(p.src[start:], "}}")
		if j < 0 {
			return nil, "", fmt.Errorf("%s:%d: {{ without }}", p.name, p.line(start))
		}
		action := p.src[start+2 : start+j]
		p.pos = start + j + 2
		if strings.HasPrefix(action, "- ") {
			text = strings.TrimRight(text, spaceChars)
			action = action[2:]
		}
		if strings.HasSuffix(action, " -") {
			p.trimNext = true
			action = action[:len(action)-2]
		}
		if text != "" {
			out = append(out, section{text: text})
		}
		action = strings.TrimSpace(action)
		switch {
		case action == "end" || action == "else" || strings.HasPrefix(action, "else if "):
			if depth == 0 {
				return nil, "", fmt.Errorf("%s:%d: {{%s}} without {{if}}", p.name, p.line(start), action)
			}
			return out, action, nil
		case strings.HasPrefix(action, "if "):
			block, err := p.block(depth, start, action[len("if "):])
			if err != nil {
				return nil, "", err
			}
			out = append(out, block)
		default:
			return nil, "", fmt.Errorf("%s:%d: {{%s}}: only if, else if, else and end are understood", p.name, p.line(start), action)
		}
	}
}

// block reads an if block's arms, the first condition being cond.
func (p *sectionParser) block(depth, start int, cond string) (section, error) {
	var s section
	for {
		b := branch{always: cond == ""}
		if !b.always {
			tools, err := parseCond(cond)
			if err != nil {
				return section{}, fmt.Errorf("%s:%d: %w", p.name, p.line(start), err)
			}
			b.anyOf = tools
		}
		body, next, err := p.parse(depth + 1)
		if err != nil {
			return section{}, err
		}
		b.body = body
		s.branches = append(s.branches, b)
		switch {
		case next == "end":
			return s, nil
		case b.always:
			return section{}, fmt.Errorf("%s:%d: {{%s}} after {{else}}", p.name, p.line(start), next)
		case next == "else":
			cond = ""
		default:
			cond = strings.TrimPrefix(next, "else if ")
		}
	}
}

// parseCond reads `has "x"` or `or (has "a") (has "b") ...` into the tool
// names.
func parseCond(cond string) ([]string, error) {
	cond = strings.TrimSpace(cond)
	if name, ok := parseHas(cond); ok {
		return []string{name}, nil
	}
	rest, ok := strings.CutPrefix(cond, "or ")
	if !ok {
		return nil, fmt.Errorf("condition %q: want has \"tool\" or or (has \"a\") (has \"b\")", cond)
	}
	var tools []string
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		end := strings.IndexByte(rest, ')')
		if rest[0] != '(' || end < 0 {
			return nil, fmt.Errorf("condition %q: want (has \"tool\") after or", cond)
		}
		name, ok := parseHas(rest[1:end])
		if !ok {
			return nil, fmt.Errorf("condition %q: want (has \"tool\") after or", cond)
		}
		tools = append(tools, name)
		rest = rest[end+1:]
	}
	if len(tools) < 2 {
		return nil, fmt.Errorf("condition %q: or needs two conditions", cond)
	}
	return tools, nil
}

// parseHas reads `has "x"`.
func parseHas(s string) (string, bool) {
	arg, ok := strings.CutPrefix(strings.TrimSpace(s), "has ")
	if !ok {
		return "", false
	}
	arg = strings.TrimSpace(arg)
	if len(arg) < 2 || arg[0] != '"' || arg[len(arg)-1] != '"' || strings.ContainsAny(arg[1:len(arg)-1], `"\`) {
		return "", false
	}
	return arg[1 : len(arg)-1], true
}

func (p *sectionParser) line(pos int) int { return 1 + strings.Count(p.src[:pos], "\n") }

// spaceChars is the white space the trim markers remove, as text/template.
const spaceChars = " \t\r\n"

// render writes the sections kept for tools.
func render(sb *strings.Builder, sections []section, tools []string) {
	for _, s := range sections {
		if s.branches == nil {
			sb.WriteString(s.text)
			continue
		}
		for _, b := range s.branches {
			if b.always || slices.ContainsFunc(b.anyOf, func(t string) bool { return slices.Contains(tools, t) }) {
				render(sb, b.body, tools)
				break
			}
		}
	}
}
