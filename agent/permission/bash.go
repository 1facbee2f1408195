package permission

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Command is one simple command of a bash command line, as rules see it.
//
// How a command line becomes commands (the rules behind SplitBash):
//
//   - Every simple command is found wherever it sits: pipelines, && || ;
//     lists, subshells, { } groups, $( ) and backticks, <( ) >( ), if / for /
//     while / case conditions and bodies, function bodies, here-documents,
//     and the string given to eval, trap, or sh -c, bash -c, zsh -c when
//     that string is a literal that parses. Other programs that run
//     commands (xargs, find -exec, ssh, interpreters) stay commands of their
//     own: asked unless allowed, and a deny rule for what they run does not
//     see inside them.
//   - Environment assignments before a command (FOO=1 go test) are dropped:
//     the command is "go test". Assignments to variables that change what a
//     command runs or loads (PATH, LD_PRELOAD, GIT_*, HOME, …: see
//     hijackVar) are reported as commands of their own that no rule may
//     allow.
//   - Wrappers that only run the command after them are dropped: command,
//     builtin, exec, nohup, env NAME=value, nice, timeout, time. A wrapper
//     used in a way this does not recognise stays the command. For deny
//     and ask rules a command is also the program it runs however it is
//     named (/bin/rm, ./rm, busybox rm, xargs rm, find -exec rm: see
//     programReadings); an allow rule for a name does not allow a file of
//     that name in a workspace directory on PATH (see pathShadow).
//   - A command whose name is not a literal ($CMD args, "$(which rm)", a
//     glob) cannot be allowed by a rule: it is asked.
//   - Output redirection to a file (> f, >> f, &> f, >| f, <> f) makes the
//     command a writing one: the redirection stays in the subject
//     ("cat a > b"), and the file is also decided as an edit subject, so an
//     allow rule for "cat *" does not on its own let "cat a > b" run.
//     Redirections to /dev/null, /dev/stdout, /dev/stderr and between file
//     descriptors (2>&1) write nothing and are left out of the subject.
//   - Constructs that let bash run code hidden in a variable's value are
//     reported as commands no rule may allow: arithmetic on names ($((x)),
//     ((…)), let, ${a[i]}, ${s:i}, [[ x -eq y ]]), indirect expansion
//     (${!x}) and prompt expansion (${x@P}).
type Command struct {
	// Args are the command's words, quotes removed. A word only known at
	// run time ($x, $(…)) keeps its source text.
	Args []string
	// Subject is what bash rules match: Args joined by spaces, then the
	// redirections that read or write files.
	Subject string
	// Writes are the files the command writes through redirection, as
	// written (relative to the command's working directory).
	Writes []string
	// Reason, when set, says why no rule may allow this command; it is
	// asked unless a rule denies it.
	Reason string
	// Paths are the words that may name files (see Path), from the
	// arguments after the command name and from the redirections. Each
	// that resolves outside the workspace is an external_directory
	// question of its own, whatever the bash rules say.
	Paths []Path
	// Dirs are the directories, relative to where the line starts, that
	// cd and pushd in the same line may have moved to before this command
	// ran; relative paths are judged from each of them too.
	Dirs []string
}

// maxBashLine bounds the command lines SplitBash reads; longer ones are
// asked about whole.
const maxBashLine = 256 << 10

// maxShellDepth bounds eval / sh -c nesting.
const maxShellDepth = 8

// SplitBash finds every simple command in a bash command line. It fails only
// when the line does not parse; the error says where. An empty line, or one
// with only comments or assignments, has no commands.
func SplitBash(line string) ([]Command, error) { return splitBash(line, false) }

// splitBash is SplitBash; walkAll leaves the whole walk to syntax.Walk
// (see splitter.walk).
func splitBash(line string, walkAll bool) ([]Command, error) {
	if len(line) > maxBashLine {
		return nil, fmt.Errorf("the command line is %d bytes, more than the %d this checker reads", len(line), maxBashLine)
	}
	commands, words := estimate(line)
	s := &splitter{cmds: make([]Command, 0, commands), slabSize: words, walkAll: walkAll}
	s.visitFn = s.visitor
	if err := s.split(line, 0); err != nil {
		return nil, err
	}
	if s.changesDir {
		dirs := s.cdDirs()
		for i := range s.cmds {
			c := &s.cmds[i]
			c.Dirs = dirs
			for _, w := range c.Writes {
				if c.Reason == "" && !path.IsAbs(w) {
					c.Reason = "the line changes directory, so the file it writes (" + w + ") is relative to a directory only known at run time"
				}
			}
		}
	}
	return s.cmds, nil
}

// estimate guesses, in one pass over the line, how many commands it holds
// (from its separators), so the slice of them is allocated once for most
// lines, and how many words (from its blanks), the size of the slabs
// arguments and paths are cut from; a line that needs more gets another.
func estimate(line string) (commands, words int) {
	commands, words = 1, 1
	for i := 0; i < len(line); i++ {
		switch lineClass[line[i]] {
		case sepClass:
			commands++
		case blankClass:
			words++
		case bothClass:
			commands++
			words++
		}
	}
	return min(commands, 64), min(words, 256)
}

// lineClass sorts bytes for estimate.
var lineClass = func() (t [256]uint8) {
	for _, c := range "|;&(`" {
		t[c] = sepClass
	}
	t[' '], t['\t'] = blankClass, blankClass
	t['\n'] = bothClass
	return t
}()

const (
	sepClass = 1 + iota
	blankClass
	bothClass
)

type splitter struct {
	cmds       []Command
	changesDir bool
	cdTargets  []string // the literal directories cd and pushd go to, in order

	// wordBuf holds the words of the command being split. A nested split
	// (eval, sh -c) reuses it, so a command's words are not read after one.
	wordBuf []word
	// Slabs the commands' arguments and paths are cut from, so a line
	// costs a few allocations rather than a few per command; each piece is
	// capped at its length, so appending to one copies it.
	strSlab  []string
	pathSlab []Path
	pathBuf  []Path // a command's paths as they are found, before copying
	slabSize int    // the size of a new slab, from the line's length

	// src and depth are the script being walked and its eval / sh -c
	// nesting.
	src   string
	depth int
	// walkAll makes walk leave every node to syntax.Walk, for the test
	// that holds the two to the same result.
	walkAll bool
	// visitFn is s.visitor, made once: a method value handed to
	// syntax.Walk is allocated each time.
	visitFn func(syntax.Node) bool
}

// words returns wordBuf holding n words.
func (s *splitter) words(n int) []word {
	if cap(s.wordBuf) < n {
		s.wordBuf = make([]word, max(n, 16))
	}
	return s.wordBuf[:n]
}

// strings returns n strings cut from the slab.
func (s *splitter) strings(n int) []string {
	if cap(s.strSlab)-len(s.strSlab) < n {
		s.strSlab = make([]string, 0, max(n, s.slabSize))
	}
	i := len(s.strSlab)
	s.strSlab = s.strSlab[:i+n]
	return s.strSlab[i : i+n : i+n]
}

// paths returns a copy of ps cut from the slab; nil when ps is empty.
func (s *splitter) paths(ps []Path) []Path {
	n := len(ps)
	if n == 0 {
		return nil
	}
	if cap(s.pathSlab)-len(s.pathSlab) < n {
		// Fewer words are paths than are words: half a slab first.
		size := s.slabSize
		if s.pathSlab == nil {
			size = size/2 + 1
		}
		s.pathSlab = make([]Path, 0, max(n, size))
	}
	i := len(s.pathSlab)
	s.pathSlab = append(s.pathSlab, ps...)
	return s.pathSlab[i : i+n : i+n]
}

// maxCdDirs bounds the directories cd targets combine into.
const maxCdDirs = 8

// cdDirs combines the line's cd targets into the directories a command may
// run in: each target taken from the start and from every earlier one.
func (s *splitter) cdDirs() []string {
	dirs := []string{"."}
	for _, t := range s.cdTargets {
		for _, d := range dirs {
			if len(dirs) >= maxCdDirs {
				break
			}
			next := t
			if !path.IsAbs(t) && !strings.HasPrefix(t, "~") {
				next = d + "/" + t
			}
			dirs = append(dirs, next)
		}
	}
	return dirs[1:]
}

// parsers keeps bash parsers for reuse: making one allocates more than
// parsing a short line does.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

func (s *splitter) split(src string, depth int) error {
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		return fmt.Errorf("the command line does not parse as bash: %w", err)
	}
	outerSrc, outerDepth := s.src, s.depth
	s.src, s.depth = src, depth
	s.walk(f)
	s.src, s.depth = outerSrc, outerDepth
	return nil
}

// visitor is what syntax.Walk calls for the nodes walk hands it: visit,
// but not into plain words, which hold nothing for it.
func (s *splitter) visitor(n syntax.Node) bool {
	if w, ok := n.(*syntax.Word); ok && leafWord(w) {
		return false
	}
	s.visit(s.src, n, s.depth)
	return true
}

// visit handles one node; Walk goes on into its children, so commands nested
// anywhere are visited too.
func (s *splitter) visit(src string, n syntax.Node, depth int) {
	switch n := n.(type) {
	case *syntax.Stmt:
		switch cmd := n.Cmd.(type) {
		case *syntax.CallExpr:
			s.call(src, cmd, n.Redirs, depth)
		case *syntax.DeclClause:
			s.decl(src, cmd, n.Redirs)
		default:
			// A redirection alone ("> f", "$(< f)") or on a compound
			// command ("{ a; b; } > f") reads or writes without a simple
			// command of its own.
			if text, writes, paths, reason := redirects(src, n.Redirs); len(writes) > 0 || len(paths) > 0 || reason != "" {
				s.add(Command{Subject: strings.Join(text, " "), Writes: writes, Paths: paths, Reason: reason})
			}
		}
	case *syntax.ArithmExp:
		s.arithm(src, n, n.X)
	case *syntax.ArithmCmd:
		s.arithm(src, n, n.X)
	case *syntax.LetClause:
		s.arithm(src, n, n.Exprs...)
	case *syntax.CStyleLoop:
		s.arithm(src, n, n.Init, n.Cond, n.Post)
	case *syntax.Assign:
		if n.Index != nil {
			s.arithm(src, n, n.Index)
		}
	case *syntax.ArrayElem:
		if n.Index != nil {
			s.arithm(src, n, n.Index)
		}
	case *syntax.ParamExp:
		s.paramExp(src, n)
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			s.arithm(src, n, testOperand(n.X), testOperand(n.Y))
		}
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
			if w, ok := n.X.(*syntax.Word); !ok || !isName(w.Lit()) {
				s.hazard(src, n, "tests a variable whose name is only known at run time; a subscript in it runs as arithmetic")
			}
		}
	case *syntax.WordIter:
		if hijackVar(n.Name.Value) {
			s.hazard(src, n, "the loop sets "+n.Name.Value+", which changes what later commands run")
		}
	}
}

func (s *splitter) add(c Command) {
	if c.Subject == "" {
		c.Subject = "''" // an empty command name, the only way to an empty subject
	}
	s.cmds = append(s.cmds, c)
}

// hazard reports a construct no rule may allow.
func (s *splitter) hazard(src string, n syntax.Node, reason string) {
	s.add(Command{Subject: source(src, n), Reason: reason})
}

// call handles a simple command with the redirections of its statement.
func (s *splitter) call(src string, ce *syntax.CallExpr, redirs []*syntax.Redirect, depth int) {
	for _, a := range ce.Assigns {
		if a.Name != nil && hijackVar(a.Name.Value) {
			s.hazard(src, a, "sets "+a.Name.Value+", which changes what commands run or load")
		}
	}
	text, writes, rpaths, reason := redirects(src, redirs)
	if len(ce.Args) == 0 {
		if len(writes) > 0 || len(rpaths) > 0 || reason != "" {
			s.add(Command{Subject: strings.Join(text, " "), Writes: writes, Paths: rpaths, Reason: reason})
		}
		return
	}

	ws := s.words(len(ce.Args))
	for i, a := range ce.Args {
		ws[i] = wordOf(src, a)
	}
	ws, env := unwrap(ws)
	for _, assign := range env {
		if name, _, _ := strings.Cut(assign, "="); hijackVar(name) {
			s.add(Command{Subject: assign, Reason: "sets " + name + ", which changes what commands run or load"})
		}
	}

	// The string of eval or sh -c is checked instead of the command itself;
	// the redirections still apply to whatever it runs.
	if script, what, ok := innerScript(ws); ok {
		if len(writes) > 0 || len(rpaths) > 0 || reason != "" {
			s.add(Command{Subject: strings.Join(text, " "), Writes: writes, Paths: rpaths, Reason: reason})
		}
		// Taken before the nested split, which reuses the words' buffer.
		args := texts(ws)
		subject := joinSubject(args, nil)
		switch {
		case script == nil:
			s.add(Command{Args: args, Subject: subject, Reason: what + " runs a string that is only known at run time"})
		case depth+1 > maxShellDepth:
			s.add(Command{Args: args, Subject: subject, Reason: fmt.Sprintf("%s nests shells more than %d deep", what, maxShellDepth)})
		default:
			if err := s.split(*script, depth+1); err != nil {
				s.add(Command{Args: args, Subject: subject, Reason: what + " runs a string that " + strings.TrimPrefix(err.Error(), "the command line ")})
			}
		}
		return
	}

	argTexts := s.strings(len(ws))
	for i, w := range ws {
		argTexts[i] = w.text
	}
	args := ce.Args[len(ce.Args)-len(ws):]
	subject, ok := "", false
	if len(text) == 0 {
		subject, ok = spelled(src, args, argTexts)
	}
	if !ok {
		subject = joinSubject(argTexts, text)
	}
	c := Command{Args: argTexts, Subject: subject, Writes: writes, Reason: reason}
	writers := writeTargets(c.Args)
	paths := s.pathBuf[:0]
	for i, a := range args[1:] {
		use := UseOperand
		if writers != nil && writers[i+1] {
			use = UseWrite
		}
		paths = appendWordPaths(paths, src, a, use)
	}
	paths = append(paths, impliedWrites(c.Args)...)
	paths = append(paths, rpaths...)
	s.pathBuf = paths
	c.Paths = s.paths(paths)
	switch name := ws[0]; {
	case !name.lit:
		c.Reason = "the command name is only known at run time"
	case name.glob:
		c.Reason = "the command name is a pattern the shell expands"
	case name.text == "":
		c.Reason = "the command name is empty"
	case name.text == "cd" || name.text == "pushd" || name.text == "popd":
		s.changesDir = true
		s.cdTarget(&c, ws)
	}
	s.add(c)
}

// cdTarget notes where cd or pushd goes; a bare cd goes home, and cd -
// or popd to a directory only known at run time.
func (s *splitter) cdTarget(c *Command, ws []word) {
	var operands []word
	for _, w := range ws[1:] {
		if w.lit && strings.HasPrefix(w.text, "-") && w.text != "-" {
			continue // -P, -L
		}
		operands = append(operands, w)
	}
	switch {
	case ws[0].text == "popd":
		return // back to a directory pushed earlier in the line
	case len(operands) == 0:
		c.Paths = append(c.Paths, Path{Text: "", Home: true})
	case operands[0].lit && operands[0].text == "-":
		c.Paths = append(c.Paths, Path{Text: "-", Expand: "cd - goes back to a directory only known at run time"})
	case operands[0].lit && !operands[0].glob:
		s.cdTargets = append(s.cdTargets, operands[0].text)
	case operands[0].text == "~" || strings.HasPrefix(operands[0].text, "~/"):
		s.cdTargets = append(s.cdTargets, operands[0].text)
	}
}

// decl handles declare, local, export, readonly, typeset and nameref: a
// command rules decide like any other, whose assignments are checked too.
func (s *splitter) decl(src string, d *syntax.DeclClause, redirs []*syntax.Redirect) {
	text, writes, paths, reason := redirects(src, redirs)
	ws := []word{{text: d.Variant.Value, lit: true}}
	for _, a := range d.Args {
		switch {
		case a.Name != nil && hijackVar(a.Name.Value):
			s.hazard(src, a, "sets "+a.Name.Value+", which changes what later commands run")
		case a.Name == nil && a.Value != nil:
			if w := wordOf(src, a.Value); !w.lit && reason == "" {
				reason = d.Variant.Value + " sets a variable whose name is only known at run time"
			}
		}
		ws = append(ws, word{text: source(src, a), lit: true})
	}
	s.add(Command{Args: texts(ws), Subject: joinWords(ws, text), Writes: writes, Paths: paths, Reason: reason})
}

// arithm reports n when any of exprs reads a variable: bash evaluates a
// variable's value as arithmetic, and an array subscript in that value
// (a[$(cmd)]) runs a command.
func (s *splitter) arithm(src string, n syntax.Node, exprs ...syntax.ArithmExpr) {
	for _, x := range exprs {
		if x != nil && !numericOnly(x) {
			s.hazard(src, n, "arithmetic on a variable can run a command hidden in its value")
			return
		}
	}
}

func (s *splitter) paramExp(src string, p *syntax.ParamExp) {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	switch {
	case p.Excl && p.Names == 0 && !allElements(p.Index):
		s.hazard(src, p, "indirect expansion reads a variable named by another, whose subscript runs as arithmetic")
	case p.Index != nil && !allElements(p.Index):
		s.arithm(src, p, p.Index)
	case p.Slice != nil:
		s.arithm(src, p, p.Slice.Offset, p.Slice.Length)
	case p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && p.Exp.Word.Lit() == "P":
		s.hazard(src, p, "prompt expansion (@P) runs command substitutions in the variable's value")
	case p.Exp != nil && (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) && hijackVar(name):
		s.hazard(src, p, "assigns "+name+", which changes what later commands run")
	}
}

// allElements reports whether an index is [@] or [*].
func allElements(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// numericOnly reports whether an arithmetic expression uses only number
// literals, so evaluating it cannot read a variable.
func numericOnly(x syntax.ArithmExpr) bool {
	ok := true
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, isWord := n.(*syntax.Word); isWord && !isNumber(w.Lit()) {
			ok = false
		}
		return ok
	})
	return ok
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		// Digits, and the letters of hex (0x1f) and based (16#ff) numbers,
		// but a word that starts with a letter is a name.
		if !(r >= '0' && r <= '9' || r == '#' || r == 'x' || r == 'X' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return s[0] >= '0' && s[0] <= '9'
}

func testOperand(x syntax.TestExpr) syntax.ArithmExpr {
	if w, ok := x.(*syntax.Word); ok {
		return w
	}
	return nil
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// redirects renders the redirections that matter to rules and lists the
// files they write, and the paths they read and write. reason is set when a
// write goes to a file only known at run time.
func redirects(src string, rs []*syntax.Redirect) (text, writes []string, paths []Path, reason string) {
	for _, r := range rs {
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		target := wordOf(src, r.Word)
		switch r.Op {
		case syntax.RdrIn:
			if target.lit && isNullDevice(target.text) {
				continue
			}
			paths = append(paths, wordPaths(src, r.Word, UseRead)...)
		case syntax.DplIn, syntax.DplOut:
			if target.lit && isFD(target.text) {
				continue // 2>&1, >&-: between descriptors
			}
			if r.Op == syntax.DplIn {
				paths = append(paths, wordPaths(src, r.Word, UseRead)...)
				break
			}
			fallthrough // >&file is &>file
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
			syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
			switch {
			case target.lit && isNullDevice(target.text):
				continue
			case !target.lit:
				reason = "it writes to a file only known at run time (" + target.text + ")"
			case target.text == "":
				reason = "it redirects to an empty file name"
			default:
				writes = append(writes, target.text)
			}
			paths = append(paths, wordPaths(src, r.Word, UseWrite)...)
		}
		text = append(text, fd+r.Op.String()+" "+target.text)
	}
	return text, writes, paths, reason
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-") // 3>&1- moves a descriptor
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func isNullDevice(s string) bool {
	return s == "/dev/null" || s == "/dev/stdout" || s == "/dev/stderr"
}

// source returns the text of n in src.
func source(src string, n syntax.Node) string {
	start, end := n.Pos().Offset(), n.End().Offset()
	if start < end && end <= uint(len(src)) {
		return src[start:end]
	}
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, n); err == nil && b.Len() > 0 {
		return b.String()
	}
	return fmt.Sprintf("(%T)", n)
}

func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

func joinWords(ws []word, redirs []string) string { return joinSubject(texts(ws), redirs) }

// spelled returns the source text of the words ws, when it is their texts
// joined by single spaces, as it is for most commands (no quotes, escapes
// or extra blanks): the subject joinSubject would build, without building
// it.
func spelled(src string, ws []*syntax.Word, texts []string) (string, bool) {
	if len(ws) == 0 {
		return "", false
	}
	start, end := ws[0].Pos().Offset(), ws[len(ws)-1].End().Offset()
	if start >= end || end > uint(len(src)) {
		return "", false
	}
	span := src[start:end]
	rest := span
	for i, t := range texts {
		if i > 0 {
			if rest == "" || rest[0] != ' ' {
				return "", false
			}
			rest = rest[1:]
		}
		if !strings.HasPrefix(rest, t) {
			return "", false
		}
		rest = rest[len(t):]
	}
	return span, rest == ""
}

// joinSubject joins a command's words and redirections with spaces.
func joinSubject(args, redirs []string) string {
	if len(redirs) == 0 {
		return strings.Join(args, " ")
	}
	n := len(args) + len(redirs) - 1
	for _, a := range args {
		n += len(a)
	}
	for _, r := range redirs {
		n += len(r)
	}
	var b strings.Builder
	b.Grow(n)
	for i, a := range append(args[:len(args):len(args)], redirs...) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a)
	}
	return b.String()
}
