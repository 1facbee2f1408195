package htmlmd

import (
	"strconv"
	"strings"
)

// cell is a rendered cell of a table written as a table.
type cell struct {
	blocks []block
	span   int
	align  string
}

// table writes a GFM table: the first row (the thead's, else the first)
// is the header, cells are one line each with their pipes escaped, a cell
// spanning columns is followed by empty ones. A table used for layout (one
// column wide, or with a cell holding a code block, a heading, a quote or
// another table) is written as the blocks of its cells instead, in order.
func (r *renderer) table(n *node) {
	r.flush()
	var head, body, foot [][]*node
	var captions, fostered []*node
	var row []*node
	var walk func(n *node, to *[][]*node)
	walk = func(n *node, to *[][]*node) {
		for c := n.first; c != nil; c = c.next {
			switch c.tag {
			case "caption":
				captions = append(captions, c)
			case "thead":
				walk(c, &head)
			case "tbody":
				walk(c, to)
			case "tfoot":
				walk(c, &foot)
			case "tr":
				var cells []*node
				for d := c.first; d != nil; d = d.next {
					if isCell(d.tag) {
						cells = append(cells, d)
					} else if d.tag != "" || strings.TrimSpace(d.text) != "" {
						fostered = append(fostered, d)
					}
				}
				*to = append(*to, cells)
			case "td", "th":
				// Cells outside any row: a table with its tr left out.
				row = append(row, c)
			case "colgroup", "col":
			default:
				// Content outside the cells, which browsers show before
				// the table.
				if c.tag != "" || strings.TrimSpace(c.text) != "" {
					fostered = append(fostered, c)
				}
			}
		}
		if len(row) > 0 {
			*to = append(*to, row)
			row = nil
		}
	}
	walk(n, &body)
	rows := append(append(head, body...), foot...)

	for _, c := range fostered {
		r.node(c)
	}
	r.flush()
	for _, c := range captions {
		if t := r.flat(func() { r.children(c) }); t != "" {
			r.add(block{kind: kPara, text: t})
		}
	}
	// Whether the table is for layout is decided from the tree, before
	// rendering, so that the cells of nested layout tables render straight
	// into this container rather than be copied up level by level.
	cols := 0
	layout := n.get("role") == "presentation"
	for _, tr := range rows {
		width := 0
		for _, td := range tr {
			width += colspan(td)
			layout = layout || holdsBlocks(td)
		}
		cols = max(cols, width)
	}
	if layout || cols <= 1 || cols > maxCols {
		for _, tr := range rows {
			for _, td := range tr {
				r.flush()
				if !dropped(td) {
					r.children(td)
				}
				r.flush()
			}
		}
		return
	}
	cells := make([][]cell, 0, len(rows))
	for _, tr := range rows {
		out := make([]cell, 0, len(tr))
		for _, td := range tr {
			s := r.sub(r.nest)
			if !dropped(td) {
				s.children(td)
			}
			s.flush()
			out = append(out, cell{blocks: s.blocks, span: colspan(td), align: strings.ToLower(strings.TrimSpace(td.get("align")))})
		}
		cells = append(cells, out)
	}

	var sb strings.Builder
	var aligns []string
	for i, row := range cells {
		texts := make([]string, 0, cols)
		for _, c := range row {
			texts = append(texts, cellText(c.blocks))
			for k := 1; k < c.span; k++ {
				texts = append(texts, "")
			}
			if i == 0 {
				for k := 0; k < c.span; k++ {
					aligns = append(aligns, c.align)
				}
			}
		}
		if i > 0 && strings.Join(texts, "") == "" {
			continue
		}
		for len(texts) < cols {
			texts = append(texts, "")
		}
		writeRow(&sb, texts[:cols])
		if i == 0 {
			sep := make([]string, cols)
			for k := range sep {
				a := ""
				if k < len(aligns) {
					a = aligns[k]
				}
				switch a {
				case "center":
					sep[k] = ":---:"
				case "right":
					sep[k] = "---:"
				case "left":
					sep[k] = ":---"
				default:
					sep[k] = "---"
				}
			}
			writeRow(&sb, sep)
		}
	}
	if strings.Trim(sb.String(), "|-: \n") == "" {
		return // every cell empty
	}
	r.add(block{kind: kTable, text: strings.TrimSuffix(sb.String(), "\n")})
}

// maxCols is the widest table written as a table; a wider one is no table
// a reader could follow.
const maxCols = 64

func colspan(td *node) int {
	span, err := strconv.Atoi(strings.TrimSpace(td.get("colspan")))
	if err != nil || span < 1 {
		return 1
	}
	return min(span, maxCols)
}

// holdsBlocks reports whether a cell holds what a table cell in Markdown
// cannot: a code block, a heading, a quote, a rule, another table.
func holdsBlocks(n *node) bool {
	for c := n.first; c != nil; c = c.next {
		if c.tag == "" || dropped(c) {
			continue
		}
		switch c.tag {
		case "table", "pre", "xmp", "listing", "plaintext", "textarea", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "hr":
			return true
		}
		if holdsBlocks(c) {
			return true
		}
	}
	return false
}

func writeRow(sb *strings.Builder, cells []string) {
	sb.WriteByte('|')
	for _, c := range cells {
		sb.WriteByte(' ')
		sb.WriteString(c)
		if c != "" {
			sb.WriteByte(' ')
		}
		sb.WriteByte('|')
	}
	sb.WriteByte('\n')
}

// cellText is a cell's content on one line, its pipes escaped.
func cellText(blocks []block) string {
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if b.kind == kList {
			// A list in a cell: its items in a row.
			parts = append(parts, strings.Join(b.items, "; "))
			continue
		}
		parts = append(parts, b.text)
	}
	s := oneLine(strings.Join(parts, " "))
	return strings.ReplaceAll(s, "|", `\|`)
}
