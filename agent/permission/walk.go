package permission

import "mvdan.cc/sh/v3/syntax"

// walk visits n and every node below it, in the order syntax.Walk does,
// as syntax.Walk(n, s.visitFn) would. It follows the shapes most command
// lines are made of (lists, pipelines, simple commands, plain words,
// redirections) itself and hands every other node, with all below it, to
// syntax.Walk: that one pays for defer handling on every node it enters,
// which for a pipeline of simple commands costs more than the visits.
//
// Every node it follows itself is one visit does nothing with (but Stmt,
// which it visits), so only the order of the children matters; a test
// holds walk to syntax.Walk on the fuzz corpus (see TestWalkAgrees).
func (s *splitter) walk(n syntax.Node) {
	if s.walkAll {
		syntax.Walk(n, s.visitFn)
		return
	}
	switch n := n.(type) {
	case *syntax.File:
		for _, st := range n.Stmts {
			s.walk(st)
		}
	case *syntax.Stmt:
		s.visit(s.src, n, s.depth)
		if n.Cmd != nil {
			s.walk(n.Cmd)
		}
		for _, r := range n.Redirs {
			s.walk(r)
		}
	case *syntax.BinaryCmd:
		s.walk(n.X)
		s.walk(n.Y)
	case *syntax.CallExpr:
		for _, a := range n.Assigns {
			syntax.Walk(a, s.visitFn)
		}
		for _, w := range n.Args {
			s.walk(w)
		}
	case *syntax.Redirect:
		if n.Word != nil {
			s.walk(n.Word)
		}
		if n.Hdoc != nil {
			s.walk(n.Hdoc)
		}
	case *syntax.Word:
		if !leafWord(n) {
			syntax.Walk(n, s.visitFn)
		}
	default:
		syntax.Walk(n, s.visitFn)
	}
}

// leafWord reports whether w is only literal text and single quotes,
// which hold no node of their own.
func leafWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return false
		}
	}
	return true
}
