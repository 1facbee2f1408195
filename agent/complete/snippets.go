package complete

import (
	"hash/maphash"
	"slices"
	"strings"
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
	// maxRecent closed buffers of at most maxRecentSize bytes stay
	// sources of snippets.
	maxRecent     = 5
	maxRecentSize = 256 << 10
	// maxScored bounds the buffers whose windows a request scores: past
	// it, the recently edited ones and those nearest the cursor's file
	// (the longest shared directory) are kept, so a session of
	// thousands of open buffers costs a request what 200 do.
	maxScored = 200
)

// recentBuffer is a closed buffer edited lately, as it was closed.
type recentBuffer struct {
	Buffer
	at time.Time
}

// candidates are the open buffers and the recently edited closed ones
// that are not open again.
func (e *Engine) candidates(now time.Time) []Buffer {
	var bufs []Buffer
	if e.o.Buffers != nil {
		bufs = e.o.Buffers()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.recent = slices.DeleteFunc(e.recent, func(r recentBuffer) bool {
		if now.Sub(r.at) < recentEdit {
			return false
		}
		delete(e.indexes, r.URI)
		return true
	})
	for _, r := range e.recent {
		if slices.ContainsFunc(bufs, func(b Buffer) bool { return b.URI == r.URI }) {
			continue
		}
		bufs = append(bufs, r.Buffer)
		e.edited[r.URI] = r.at // ranks as recently edited
	}
	return bufs
}

type scored struct {
	buf   *Buffer
	w     window
	score float64
}

// snippets are the windows of the other open buffers most like the
// cursor's neighbourhood, within the buffer budget, best first.
func (e *Engine) snippets(req Request, prefix string) []llm.FIMFile {
	query := identifiers(neighbourhood(prefix), make(idSet, 0, 64))
	if len(query) == 0 {
		return nil
	}
	now := time.Now()
	cands := e.candidates(now)
	bufs := make([]Buffer, 0, len(cands))
	for _, b := range cands {
		if b.URI != req.URI && len(b.Text) <= maxIndexed && (b.Path == "" || !e.Excluded(b.Path)) {
			bufs = append(bufs, b)
		}
	}
	bufs = e.nearest(bufs, req.Path, now)
	var best []scored
	for i := range bufs {
		b := &bufs[i]
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

// nearest keeps maxScored of bufs: the recently edited first, then those
// sharing the longest directory with path, then by URI.
func (e *Engine) nearest(bufs []Buffer, path string, now time.Time) []Buffer {
	if len(bufs) <= maxScored {
		return bufs
	}
	type ranked struct {
		edited bool
		shared int
		i      int
	}
	rs := make([]ranked, len(bufs))
	var h maphash.Hash
	h.SetSeed(nearSeed)
	h.WriteString(path)
	e.mu.Lock()
	for i, b := range bufs {
		t, ok := e.edited[b.URI]
		rs[i] = ranked{edited: ok && now.Sub(t) < recentEdit, i: i}
		h.WriteString(b.URI)
		h.WriteByte(0)
		h.WriteString(b.Path)
		if rs[i].edited {
			h.WriteByte(1)
		} else {
			h.WriteByte(0)
		}
	}
	sum := h.Sum64()
	out := make([]Buffer, maxScored)
	if m := e.near; m.sum == sum && m.n == len(bufs) {
		// The same buffers, cursor file and edits as the last request
		// (typing in one file): the same choice, of today's contents.
		for k, i := range m.picked {
			out[k] = bufs[i]
		}
		e.mu.Unlock()
		return out
	}
	e.mu.Unlock()
	for i := range rs {
		rs[i].shared = sharedDir(path, bufs[i].Path)
	}
	slices.SortFunc(rs, func(x, y ranked) int {
		switch {
		case x.edited != y.edited:
			if x.edited {
				return -1
			}
			return 1
		case x.shared != y.shared:
			return y.shared - x.shared
		}
		return strings.Compare(bufs[x.i].URI, bufs[y.i].URI)
	})
	picked := make([]int, maxScored)
	for k := range out {
		out[k], picked[k] = bufs[rs[k].i], rs[k].i
	}
	e.mu.Lock()
	e.near = nearestMemo{sum: sum, n: len(bufs), picked: picked}
	e.mu.Unlock()
	return out
}

// nearestMemo is nearest's last choice: the buffers' hash (their URIs and
// paths in order, which were recently edited, and the cursor's path), how
// many there were, and the indexes it kept. Ranking 2,000 buffers was a
// third of a request's time in BenchmarkContextAssemblyScale; while
// typing in one file the answer does not change.
type nearestMemo struct {
	sum    uint64
	n      int
	picked []int
}

var nearSeed = maphash.MakeSeed()

// sharedDir is how many leading directory bytes two paths share, up to
// a separator.
func sharedDir(a, b string) int {
	n := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' || a[i] == '\\' {
			n = i + 1
		}
	}
	return n
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
