package permission

import (
	"fmt"
	"strings"
)

// PowerShell is the value of Call.Shell for a command line that runs in
// PowerShell (the bash tool on Windows without Git's bash). Its commands
// are decided by the bash rules like bash's, after SplitPowerShell.
const PowerShell = "powershell"

// SplitPowerShell finds the commands of a PowerShell command line, for the
// bash rules to decide. It reads a deliberately small part of the
// language and refuses the rest, so that nothing it cannot follow is
// allowed by a rule:
//
//   - Commands are separated by ; | || && and line ends. Words are bare,
//     'single-quoted' (” is a quote) or "double-quoted" without $ or `
//     inside. # starts a comment, as does <# … #>.
//   - A command's name is compared in lower case with ".exe" dropped, a
//     module qualification removed (Microsoft.PowerShell.Management\
//     Remove-Item is remove-item; one of another module is asked, as it
//     may be a script's path) and common aliases resolved to their cmdlet
//     (rm, del → remove-item; ls, dir → get-childitem; cat, type →
//     get-content; …: see psAliases), so write PowerShell rules in lower
//     case: "get-childitem *". PowerShell itself ignores case, and a deny
//     rule must not be dodged by "RM". A dot-sourced command (". rm x")
//     is decided as the command it runs, and asked.
//   - Redirection to a file (> f, >> f, 2> f, *> f) makes the command a
//     writing one, as in bash; to $null or between streams (2>&1) it
//     writes nothing.
//   - Variables, $( ) and @( ) subexpressions, splatting, backtick
//     escapes, the call operator &, dot-sourcing and Invoke-Expression
//     make a command that no rule may allow: it is asked.
//   - Script blocks { }, parentheses, [type] expressions, keywords (if,
//     foreach, function, …), < and typographic quotes and dashes (which
//     PowerShell reads as quotes and dashes) make the whole line fail to
//     parse: it is asked whole.
//
// Paths a PowerShell command names are not judged one by one as bash's
// are (external_directory): only its redirections are.
func SplitPowerShell(line string) ([]Command, error) {
	if len(line) > maxBashLine {
		return nil, fmt.Errorf("the command line is %d bytes, more than the %d this checker reads", len(line), maxBashLine)
	}
	p := &psParser{src: []rune(line)}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.cmds, nil
}

type psParser struct {
	src  []rune
	i    int
	cmds []Command
	// the command being read
	words  []string
	redirs []string
	writes []string
	reason string
}

// psKeywords start statements this checker does not read.
var psKeywords = map[string]bool{
	"if": true, "elseif": true, "else": true, "for": true, "foreach": true, "while": true, "do": true, "until": true,
	"switch": true, "function": true, "filter": true, "workflow": true, "configuration": true, "try": true, "catch": true,
	"finally": true, "trap": true, "param": true, "begin": true, "process": true, "end": true, "dynamicparam": true,
	"class": true, "enum": true, "using": true, "return": true, "throw": true, "break": true, "continue": true,
	"exit": true, "data": true, "parallel": true, "sequence": true, "inlinescript": true,
}

// psAliases are PowerShell's common built-in aliases, resolved so that a
// rule for the cmdlet covers them.
var psAliases = map[string]string{
	"ls": "get-childitem", "dir": "get-childitem", "gci": "get-childitem",
	"cat": "get-content", "type": "get-content", "gc": "get-content",
	"rm": "remove-item", "del": "remove-item", "erase": "remove-item", "rd": "remove-item", "rmdir": "remove-item", "ri": "remove-item",
	"cp": "copy-item", "copy": "copy-item", "cpi": "copy-item",
	"mv": "move-item", "move": "move-item", "mi": "move-item",
	"ren": "rename-item", "rni": "rename-item",
	"echo": "write-output", "write": "write-output",
	"cd": "set-location", "chdir": "set-location", "sl": "set-location",
	"pwd": "get-location", "gl": "get-location",
	"sc": "set-content", "ac": "add-content", "clc": "clear-content", "ni": "new-item",
	"iex": "invoke-expression", "icm": "invoke-command", "saps": "start-process", "start": "start-process",
	"iwr": "invoke-webrequest", "curl": "invoke-webrequest", "wget": "invoke-webrequest", "irm": "invoke-restmethod",
	"sls": "select-string", "%": "foreach-object", "foreach-object": "foreach-object", "?": "where-object", "where": "where-object",
	"select": "select-object", "sort": "sort-object", "measure": "measure-object",
	"kill": "stop-process", "spps": "stop-process", "ps": "get-process", "gps": "get-process",
	"sleep": "start-sleep", "cls": "clear-host", "clear": "clear-host", "sal": "set-alias", "nal": "new-alias",
	"sv": "set-variable", "set": "set-variable", "ii": "invoke-item",
}

// psRunsCode are commands that run a string or script as code.
var psRunsCode = map[string]string{
	"invoke-expression": "Invoke-Expression runs a string as PowerShell code",
	"invoke-command":    "Invoke-Command runs a script block or file",
	"set-alias":         "an alias changes what a later command name runs",
	"new-alias":         "an alias changes what a later command name runs",
	"set-variable":      "a variable may change what later commands run",
	".":                 "dot-sourcing runs a script in this shell",
}

func (p *psParser) peek(k int) rune {
	if p.i+k < len(p.src) {
		return p.src[p.i+k]
	}
	return 0
}

func (p *psParser) opaque(reason string) {
	if p.reason == "" {
		p.reason = reason
	}
}

// end finishes the command being read.
func (p *psParser) end() {
	if len(p.words) == 0 && len(p.redirs) == 0 {
		p.reason = ""
		return
	}
	c := Command{Reason: p.reason, Writes: p.writes}
	var script []string // the name read as a script's path too, when it may be one
	if words := p.words; len(words) > 0 {
		if len(words) > 1 && words[0] == "." {
			// Dot-sourcing runs the next word, a cmdlet's name too: decide
			// that command, asked whatever allows it.
			words = words[1:]
			if c.Reason == "" {
				c.Reason = psRunsCode["."]
			}
		}
		name, why := psCommandName(words[0])
		if c.Reason == "" {
			c.Reason = why
		}
		if r, ok := psRunsCode[name]; ok && c.Reason == "" {
			c.Reason = r
		}
		c.Args = append([]string{name}, words[1:]...)
		if why != "" && len(words) == len(p.words) {
			// Either a module's command or a script by that path: a rule
			// that denies the script as written denies it too.
			script = append([]string{strings.ToLower(words[0])}, words[1:]...)
		}
	} else if c.Reason == "" {
		c.Reason = "a redirection with no command"
	}
	c.Subject = strings.Join(append(append([]string{}, c.Args...), p.redirs...), " ")
	p.cmds = append(p.cmds, c)
	if script != nil {
		p.cmds = append(p.cmds, Command{Reason: c.Reason, Args: script, Subject: strings.Join(script, " ")})
	}
	p.words, p.redirs, p.writes, p.reason = nil, nil, nil, ""
}

// psCoreModules are the modules PowerShell always has; a name qualified
// by one of them (Microsoft.PowerShell.Management\Remove-Item) is that
// module's command.
var psCoreModules = map[string]bool{
	"microsoft.powershell.core": true, "microsoft.powershell.management": true, "microsoft.powershell.utility": true,
	"microsoft.powershell.security": true, "microsoft.powershell.diagnostics": true, "microsoft.powershell.host": true,
	"microsoft.powershell.archive": true,
}

// psCommandName is the name rules decide for a command's first word: in
// lower case, ".exe" dropped, a module's qualification (Module\Name)
// removed and an alias resolved, so that neither "RM" nor
// "Microsoft.PowerShell.Management\Remove-Item" dodges a remove-item
// rule. A word that looks qualified by another module may instead be a
// script in a directory of that name, so why then says the command is
// asked whatever rule allows it; a rule that denies it still does. A
// path (.\x, ..\x, C:\x, a\b\c, a\x.ps1) is not a qualified name and
// stays as it is.
func psCommandName(word string) (name, why string) {
	name = strings.ToLower(word)
	if module, cmd, ok := strings.Cut(name, `\`); ok && module != "" && module != "." && module != ".." && cmd != "" &&
		!strings.ContainsAny(module, ":/") && !strings.ContainsAny(cmd, `\/:.`) {
		if !psCoreModules[module] {
			why = word + " names a command of the module " + word[:len(module)] + ", or a script in a directory of that name"
		}
		name = cmd
	}
	name = strings.TrimSuffix(name, ".exe")
	if a, ok := psAliases[name]; ok {
		name = a
	}
	return name, why
}

func (p *psParser) parse() error {
	for p.i < len(p.src) {
		r := p.src[p.i]
		switch {
		case r == ' ' || r == '\t' || r == '\f' || r == '\v' || r == 0xa0:
			p.i++
		case r == '\r' || r == '\n' || r == ';':
			p.i++
			p.end()
		case r == '|':
			p.i++
			if p.peek(0) == '|' {
				p.i++
			}
			p.end()
		case r == '&':
			if p.peek(1) == '&' {
				p.i += 2
				p.end()
				continue
			}
			p.i++
			if len(p.words) == 0 {
				p.opaque("the call operator & runs a command named only at run time")
				// what follows is the command's name: read as a word
			} else {
				p.opaque("& runs the command as a background job")
				p.end()
			}
		case r == '#':
			for p.i < len(p.src) && p.src[p.i] != '\n' && p.src[p.i] != '\r' {
				p.i++
			}
		case r == '<' && p.peek(1) == '#':
			end := strings.Index(string(p.src[p.i+2:]), "#>")
			if end < 0 {
				return fmt.Errorf("a <# comment is not closed by #>")
			}
			p.i += 2 + len([]rune(string(p.src[p.i+2:])[:end])) + 2
		case r == '<':
			return fmt.Errorf("< at offset %d: PowerShell reserves it; this checker does not read it", p.i)
		case strings.ContainsRune("{}()[]", r) && p.atWordStart():
			return fmt.Errorf("%q at offset %d: script blocks, parentheses and [type] expressions are not read by this checker", r, p.i)
		case strings.ContainsRune("‘’‚‛“”„–—―", r):
			return fmt.Errorf("the typographic character %q at offset %d, which PowerShell reads as a quote or a dash, is not read by this checker", r, p.i)
		case p.redirection():
			if err := p.readRedirection(); err != nil {
				return err
			}
		default:
			w, err := p.word()
			if err != nil {
				return err
			}
			if len(p.words) == 0 && psKeywords[strings.ToLower(w)] {
				return fmt.Errorf("the PowerShell keyword %q is not read by this checker", w)
			}
			p.words = append(p.words, w)
		}
	}
	p.end()
	return nil
}

func (p *psParser) atWordStart() bool {
	return p.i == 0 || strings.ContainsRune(" \t\r\n;|&", p.src[p.i-1])
}

// redirection reports whether a redirection operator starts here: >,
// >>, N>, N>>, *>, N>&M.
func (p *psParser) redirection() bool {
	r := p.src[p.i]
	if r == '>' {
		return true
	}
	return (r == '*' || r >= '1' && r <= '6') && p.peek(1) == '>' && p.atWordStart()
}

func (p *psParser) readRedirection() error {
	start := p.i
	if p.src[p.i] != '>' {
		p.i++
	}
	p.i++ // >
	if p.peek(0) == '>' {
		p.i++
	}
	if p.peek(0) == '&' {
		// N>&M: between streams
		p.i++
		if d := p.peek(0); d >= '1' && d <= '6' {
			p.i++
			return nil
		}
		return fmt.Errorf("a redirection at offset %d is not read by this checker", start)
	}
	op := string(p.src[start:p.i])
	for p.peek(0) == ' ' || p.peek(0) == '\t' {
		p.i++
	}
	if p.i >= len(p.src) || strings.ContainsRune("\r\n;|&", p.src[p.i]) {
		return fmt.Errorf("the redirection %s at offset %d has no target", op, start)
	}
	if strings.EqualFold(p.restWord(), "$null") {
		p.i += len("$null")
		return nil
	}
	reason := p.reason
	target, err := p.word()
	if err != nil {
		return err
	}
	if p.reason != reason {
		// the target is only known at run time: the command is opaque already
		return nil
	}
	p.redirs = append(p.redirs, op+" "+target)
	p.writes = append(p.writes, target)
	return nil
}

// restWord is the text from here to the next separator.
func (p *psParser) restWord() string {
	j := p.i
	for j < len(p.src) && !strings.ContainsRune(" \t\r\n;|&", p.src[j]) {
		j++
	}
	return string(p.src[p.i:j])
}

// word reads one word, its quotes removed; a part known only at run time
// makes the command opaque and keeps its source text.
func (p *psParser) word() (string, error) {
	var b strings.Builder
	for p.i < len(p.src) {
		r := p.src[p.i]
		switch {
		case strings.ContainsRune(" \t\f\v\r\n;|&\u00a0", r):
			return b.String(), nil
		case r == '\'':
			p.i++
			for {
				if p.i >= len(p.src) {
					return "", fmt.Errorf("a ' quote is not closed")
				}
				c := p.src[p.i]
				p.i++
				if c == '\'' {
					if p.peek(0) == '\'' {
						b.WriteRune('\'')
						p.i++
						continue
					}
					break
				}
				b.WriteRune(c)
			}
		case r == '"':
			p.i++
			for {
				if p.i >= len(p.src) {
					return "", fmt.Errorf("a \" quote is not closed")
				}
				c := p.src[p.i]
				p.i++
				if c == '"' {
					if p.peek(0) == '"' {
						b.WriteRune('"')
						p.i++
						continue
					}
					break
				}
				switch c {
				case '$':
					p.opaque("a double-quoted string expands $ at run time")
				case '`':
					p.opaque("a backtick escape in a double-quoted string")
				}
				b.WriteRune(c)
			}
		case r == '$':
			p.opaque("a variable or $( ) is known only at run time")
			b.WriteRune(r)
			p.i++
		case r == '@' && b.Len() == 0 && (p.peek(1) == '(' || p.peek(1) == '{' || isNameRune(p.peek(1))):
			p.opaque("@ splatting or an array expression is known only at run time")
			b.WriteRune(r)
			p.i++
		case r == '`':
			p.opaque("a backtick escape")
			b.WriteRune(r)
			p.i++
			if p.i < len(p.src) {
				b.WriteRune(p.src[p.i])
				p.i++
			}
		case r == '{' || r == '}' || r == '(' || r == ')':
			return "", fmt.Errorf("%q at offset %d: script blocks and parentheses are not read by this checker", r, p.i)
		case strings.ContainsRune("‘’‚‛“”„–—―", r):
			return "", fmt.Errorf("the typographic character %q at offset %d, which PowerShell reads as a quote or a dash, is not read by this checker", r, p.i)
		default:
			b.WriteRune(r)
			p.i++
		}
	}
	return b.String(), nil
}

func isNameRune(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// powershellChecks decides every command of a PowerShell command line
// (SplitPowerShell) by the bash rules, and each file it writes through
// redirection with writes. A line that does not parse is asked whole.
func powershellChecks(rules []Rule, line string, writes func(path string) []Check) []Check {
	cmds, err := SplitPowerShell(line)
	if err != nil {
		return []Check{decideOpaque(rules, Bash, line, "PowerShell: "+err.Error())}
	}
	var checks []Check
	for _, cmd := range cmds {
		if cmd.Reason != "" {
			checks = append(checks, decideOpaque(rules, Bash, cmd.Subject, cmd.Reason))
		} else {
			c := decide(rules, Bash, cmd.Subject)
			c.Suggest = escapePattern(cmd.Subject)
			checks = append(checks, c)
		}
		for _, w := range cmd.Writes {
			checks = append(checks, writes(w)...)
		}
	}
	return checks
}
