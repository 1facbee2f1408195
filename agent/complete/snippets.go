package complete

import (
	"slices"
	"time"

	"github.com/darman-dev/darman/agent/llm"
)

// The choice of snippets from the other buffers.
const (
	maxSnippets = 3
	// minSimilarity is the least Jaccard similarity worth sending.
	minSimilarity = 0.1
	// recentEdit is how long an edited buffer counts as recently edited,
	// and recentBoost how much that raises its snippets' scores.
	recentEdit  = 10 * time.Minute
	recentBoost = 1.25
)

type scored struct {
	buf   *Buffer
	w     window
	score float64
}

// snippets are the windows of the other open buffers most like the
// cursor's neighbourhood, within the buffer budget, best first.
func (e *Engine) snippets(req Request, prefix string) []llm.FIMFile {
	if e.o.Buffers == nil {
		return nil
	}
	query := identifiers(neighbourhood(prefix), make(idSet, 0, 64))
	if len(query) == 0 {
		return nil
	}
	bufs := e.o.Buffers()
	now := time.Now()
	var best []scored
	for i := range bufs {
		b := &bufs[i]
		if b.URI == req.URI || len(b.Text) > maxIndexed || b.Path != "" && e.Excluded(b.Path) {
			continue
		}
		ix := e.index(b)
		boost := 1.0
		e.mu.Lock()
		if t, ok := e.edited[b.URI]; ok && now.Sub(t) < recentEdit {
			boost = recentBoost
		}
		e.mu.Unlock()
		for _, w := range ix.windows {
			s := jaccard(query, w.ids) * boost
			if s < minSimilarity {
				continue
			}
			if len(best) < maxSnippets*2 || s > best[len(best)-1].score {
				best = append(best, scored{b, w, s})
				slices.SortFunc(best, func(x, y scored) int {
					switch {
					case x.score > y.score:
						return -1
					case x.score < y.score:
						return 1
					}
					return 0
				})
				if len(best) > maxSnippets*2 {
					best = best[:maxSnippets*2]
				}
			}
		}
	}
	budget := e.o.BufferTokens * bytesPerToken
	var out []llm.FIMFile
	var taken []scored
	for _, s := range best {
		if len(out) == maxSnippets {
			break
		}
		if overlaps(taken, s) {
			continue
		}
		text := s.buf.Text[s.w.start:s.w.end]
		if len(text) > budget {
			continue
		}
		budget -= len(text)
		taken = append(taken, s)
		path := s.buf.URI
		if s.buf.Path != "" {
			path = e.rel(s.buf.Path)
		}
		out = append(out, llm.FIMFile{Path: path, Text: text})
	}
	return out
}

// overlaps reports whether s shares lines with a window already taken
// from the same buffer.
func overlaps(taken []scored, s scored) bool {
	for _, t := range taken {
		if t.buf.URI == s.buf.URI && t.w.start < s.w.end && s.w.start < t.w.end {
			return true
		}
	}
	return false
}

// index is a buffer's windows, built once per version.
func (e *Engine) index(b *Buffer) *bufIndex {
	e.mu.Lock()
	ix := e.indexes[b.URI]
	e.mu.Unlock()
	if ix != nil && ix.version == b.Version && ix.size == len(b.Text) {
		return ix
	}
	ix = indexBuffer(b.Text, b.Version)
	e.mu.Lock()
	e.indexes[b.URI] = ix
	e.mu.Unlock()
	return ix
}
