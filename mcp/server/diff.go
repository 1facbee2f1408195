package server

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the line-matching table; beyond it the changed
// middle of the files is shown as one replaced block.
const maxDiffCells = 4_000_000

// unifiedDiff is a unified diff of a into b, with three lines of context,
// labelled a/name and b/name; empty when they are equal.
func unifiedDiff(name, a, b string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	ops := diffLines(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", name, name)
	const ctx = 3
	// Group ops into hunks: runs of changes with up to 2*ctx equal lines
	// between them.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		for start < i && ops[start].kind != ' ' {
			start++
		}
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, run)
				break
			}
			end = run
		}
		ax, ay := ops[start].ax, ops[start].by
		na, nb := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(ax, na), hunkRange(ay, nb))
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// op is one line of the diff; ax and by are its 0-based line numbers in
// a and b (where it is, or would be).
type op struct {
	kind   byte
	text   string
	ax, by int
}

func diffLines(x, y []string) []op {
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []op
	for i := range pre {
		ops = append(ops, op{' ', x[i], i, i})
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	if len(mx)*len(my) > maxDiffCells {
		for i, l := range mx {
			ops = append(ops, op{'-', l, pre + i, pre})
		}
		for j, l := range my {
			ops = append(ops, op{'+', l, pre + len(mx), pre + j})
		}
	} else {
		ops = append(ops, lcsOps(mx, my, pre)...)
	}
	for k := range suf {
		i, j := len(x)-suf+k, len(y)-suf+k
		ops = append(ops, op{' ', x[i], i, j})
	}
	return ops
}

// lcsOps diffs by longest common subsequence.
func lcsOps(x, y []string, off int) []op {
	n, m := len(x), len(y)
	t := make([]int32, (n+1)*(m+1))
	at := func(i, j int) *int32 { return &t[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				*at(i, j) = *at(i+1, j+1) + 1
			} else {
				*at(i, j) = max(*at(i+1, j), *at(i, j+1))
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, op{' ', x[i], off + i, off + j})
			i++
			j++
		case i < n && (j == m || *at(i+1, j) >= *at(i, j+1)):
			ops = append(ops, op{'-', x[i], off + i, off + j})
			i++
		default:
			ops = append(ops, op{'+', y[j], off + i, off + j})
			j++
		}
	}
	return ops
}
