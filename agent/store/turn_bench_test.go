package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// turnTimes is where one turn's store time went, and the process's CPU
// time during it (its background work included: the close waits for it).
type turnTimes struct{ open, calls, close, cpu time.Duration }

func (t turnTimes) total() time.Duration { return t.open + t.calls + t.close }

// storeTurn is the store's side of one `darman run` turn, the calls
// agent/session makes in the order it makes them: the store opened (its
// open-time check included), the session created (or, resumed, read),
// the user's message and its text, then two model calls. The first
// streams 1.2 KB of text (put once, then appended to every 50 ms: 20
// appends, then put whole, which folds them) and asks for a command,
// whose part is put pending, with its input, running, appended to as its
// 4 KB of output streams (10 appends) and put whole with the output; the
// second reads the window again and streams 2.4 KB (40 appends). Each
// call ends with its usage (a step-finish part and the session's totals)
// and the message put complete; the turn's end puts the message and the
// session once more, and the store is closed (badger flushes its
// memtable). No model, no sleeping: the time is the store's.
func storeTurn(b testing.TB, dataDir string, resume agent.ID) (agent.ID, turnTimes) {
	ctx := context.Background()
	var tt turnTimes
	cpu := cpuTime()
	start := time.Now()
	s, err := store.Open(ctx, dataDir, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tt.open = time.Since(start)
	start = time.Now()
	must := func(err error) {
		if err != nil {
			b.Helper()
			b.Fatal(err)
		}
	}
	now := time.Now().UTC()
	var sess agent.Session
	if resume != "" {
		sess, err = s.Session(ctx, resume)
		must(err)
	} else {
		sess = agent.Session{ID: agent.NewSessionID(), Workspace: "/home/user/project", Model: "anthropic/claude-sonnet-4-5", Created: now, Updated: now}
		must(s.PutSession(ctx, sess))
	}
	_, err = s.Grants(ctx, sess.Workspace)
	must(err)
	updateSession := func(fn func(*agent.Session)) {
		got, err := s.Session(ctx, sess.ID)
		must(err)
		fn(&got)
		got.Updated = time.Now().UTC()
		must(s.PutSession(ctx, got))
	}
	user := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleUser, Created: now, Completed: now}
	must(s.PutMessage(ctx, user))
	prompt := "Please look at the failing test in store_test.go and tell me why it fails; " + strings.Repeat("some more words of the question, ", 4)
	must(s.PutPart(ctx, agent.Part{ID: agent.NewPartID(), MessageID: user.ID, SessionID: sess.ID, Kind: agent.PartText, Text: prompt}))
	if resume == "" {
		updateSession(func(s *agent.Session) { s.Title = "Please look at the failing test in store_test.go" })
	}
	// streamText is a text part as growth (agent/session/grow.go)
	// writes it, in chunks of about 60 bytes of prose (text that
	// compresses as an answer does, not a repeated phrase).
	streamText := func(m agent.Message, appends int) {
		first := prose(60)
		p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartText, Started: time.Now().UTC(), Text: first}
		must(s.PutPart(ctx, p))
		all := first
		for seq := 1; seq <= appends; seq++ {
			chunk := prose(60)
			all += chunk
			must(s.AppendPart(ctx, p, seq, chunk))
		}
		p.Text = all
		p.Ended = time.Now().UTC()
		must(s.PutPart(ctx, p))
	}
	usage := func(m *agent.Message) {
		u := agent.Usage{Input: 12_000, Output: 400, CacheRead: 11_000}
		m.Usage, m.Cost = m.Usage.Add(u), m.Cost+0.004
		must(s.PutPart(ctx, agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartStepFinish, Usage: &u, Cost: 0.004}))
		updateSession(func(s *agent.Session) { s.Usage = s.Usage.Add(u); s.Cost += 0.004 })
	}
	var last agent.Message
	for step := range 2 {
		_, err := s.Window(ctx, sess.ID)
		must(err)
		m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: time.Now().UTC(), Model: sess.Model}
		must(s.PutMessage(ctx, m))
		streamText(m, 20*(step+1))
		var call agent.Part
		if step == 0 {
			call = agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartTool, Started: time.Now().UTC(),
				Tool: &agent.ToolCall{CallID: "toolu_01", Name: "bash", Status: agent.ToolPending, Kind: agent.ToolKindExecute}}
			must(s.PutPart(ctx, call))
			call.Tool.Input = json.RawMessage(`{"command":"go test ./agent/store -run TestRoundTrip -count=1","description":"Run the failing test"}`)
			must(s.PutPart(ctx, call))
		}
		usage(&m)
		m.Completed, m.Finish = time.Now().UTC(), agent.FinishStop
		if step == 0 {
			m.Finish = agent.FinishToolCalls
		}
		must(s.PutMessage(ctx, m))
		last = m
		if step == 0 {
			// The command runs: its output streams (agent/session's
			// terminal), then the part is put whole with it.
			tool := *call.Tool
			tool.Status = agent.ToolRunning
			call.Tool = &tool
			must(s.PutPart(ctx, call))
			var out strings.Builder
			for seq := 1; seq <= 10; seq++ {
				var piece strings.Builder
				for range 6 {
					fmt.Fprintf(&piece, "store_test.go:%d: %s\n", rand.IntN(900)+10, prose(50))
				}
				out.WriteString(piece.String())
				must(s.AppendPart(ctx, call, seq, piece.String()))
			}
			done := tool
			done.Status, done.Output = agent.ToolCompleted, out.String()
			call.Tool, call.Ended = &done, time.Now().UTC()
			must(s.PutPart(ctx, call))
		}
	}
	must(s.PutMessage(ctx, last))
	updateSession(func(*agent.Session) {})
	tt.calls = time.Since(start)
	start = time.Now()
	must(s.Close())
	tt.close = time.Since(start)
	tt.cpu = cpuTime() - cpu
	return sess.ID, tt
}

// words are what prose makes text of.
var words = strings.Fields(`the a of to in is that for it as with was on be by this are from or at an
not have which one you all were but can has their more will there when would what so if out no about
store part message session journal table value log open close write read turn answer model tool call
output test fails because returns error func package import range len nil err ctx return string byte
value key prefix append fold record segment check file disk size bound window badger manifest level`)

// prose returns about n bytes of words drawn at random.
func prose(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[rand.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.String()
}

// history fills a data directory with n earlier turns, every other one
// resuming the session of the turn before, each in a process of its own
// (an open, the turn, a close), with the check and journal or bare.
func history(b *testing.B, n int, bare bool) (string, agent.ID) {
	defer store.SetBare(bare)()
	dir := b.TempDir()
	var last agent.ID
	for i := range n {
		resume := agent.ID("")
		if i%2 == 1 {
			resume = last
		}
		last, _ = storeTurn(b, dir, resume)
	}
	return dir, last
}

// diskBytes is the space the files under dir take on disk (allocated
// blocks, as du counts them).
func diskBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n += allocated(info)
		}
		return nil
	})
	return n
}

// BenchmarkTurn is a turn's store time (storeTurn) against a data
// directory holding history=N earlier turns (half of them new sessions), with the open-time check and the journal ("full")
// and without them ("bare": store.SetBare), each store of its own, built
// its own way. Each iteration runs one turn of each, in turn (the other
// first every other time), so both see the same load; it reports the
// median and the minimum of each, their ratios and the median of each
// iteration's ratio, and the process's CPU time per turn. The stores'
// sizes at the end are reported too: badger's directory and the
// journal's, on disk.
func BenchmarkTurn(b *testing.B) {
	for _, n := range []int{100} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			fullDir, fullLast := history(b, n, false)
			bareDir, bareLast := history(b, n, true)
			var full, bareT []turnTimes
			b.ResetTimer()
			for i := range b.N {
				resumeFull, resumeBare := agent.ID(""), agent.ID("")
				if i%2 == 1 {
					resumeFull, resumeBare = fullLast, bareLast
				}
				runFull := func() {
					var tt turnTimes
					fullLast, tt = storeTurn(b, fullDir, resumeFull)
					full = append(full, tt)
				}
				runBare := func() {
					defer store.SetBare(true)()
					var tt turnTimes
					bareLast, tt = storeTurn(b, bareDir, resumeBare)
					bareT = append(bareT, tt)
				}
				if i%2 == 0 {
					runFull()
					runBare()
				} else {
					runBare()
					runFull()
				}
			}
			b.StopTimer()
			stat := func(tts []turnTimes, part func(turnTimes) time.Duration) (median, least float64) {
				d := make([]time.Duration, len(tts))
				for i, tt := range tts {
					d[i] = part(tt)
				}
				slices.Sort(d)
				return float64(d[len(d)/2].Microseconds()) / 1000, float64(d[0].Microseconds()) / 1000
			}
			fm, fmin := stat(full, turnTimes.total)
			bm, bmin := stat(bareT, turnTimes.total)
			b.ReportMetric(fm, "full-ms")
			b.ReportMetric(bm, "bare-ms")
			b.ReportMetric(fmin, "full-min-ms")
			b.ReportMetric(bmin, "bare-min-ms")
			b.ReportMetric(fm/bm, "ratio-median")
			b.ReportMetric(fmin/bmin, "ratio-min")
			// Each iteration's two turns ran one after the other: the
			// median of their ratios is the least swayed by the load.
			pairs := make([]float64, len(full))
			for i := range full {
				pairs[i] = float64(full[i].total()) / float64(bareT[i].total())
			}
			slices.Sort(pairs)
			b.ReportMetric(pairs[len(pairs)/2], "ratio-pairs")
			fc, _ := stat(full, func(t turnTimes) time.Duration { return t.cpu })
			bc, _ := stat(bareT, func(t turnTimes) time.Duration { return t.cpu })
			if haveCPUTime {
				b.ReportMetric(fc, "full-cpu-ms")
				b.ReportMetric(bc, "bare-cpu-ms")
			}
			for _, ph := range []struct {
				name string
				of   func(turnTimes) time.Duration
			}{{"open", func(t turnTimes) time.Duration { return t.open }}, {"calls", func(t turnTimes) time.Duration { return t.calls }}, {"close", func(t turnTimes) time.Duration { return t.close }}} {
				f, fmin := stat(full, ph.of)
				bb, bmin := stat(bareT, ph.of)
				b.ReportMetric(f, "full-"+ph.name+"-ms")
				b.ReportMetric(bb, "bare-"+ph.name+"-ms")
				b.ReportMetric(fmin, "full-"+ph.name+"-min-ms")
				b.ReportMetric(bmin, "bare-"+ph.name+"-min-ms")
			}
			db, jb := diskBytes(store.DatabaseDir(fullDir)), diskBytes(filepath.Join(fullDir, "journal"))
			b.ReportMetric(float64(db)/1000, "store-kB")
			b.ReportMetric(float64(diskBytes(store.DatabaseDir(bareDir)))/1000, "bare-store-kB")
			b.ReportMetric(float64(jb)/1000, "journal-kB")
			b.ReportMetric(100*float64(jb)/float64(db), "journal-%")
			if _, err := os.Stat(filepath.Join(bareDir, "journal")); err == nil && diskBytes(filepath.Join(bareDir, "journal")) > 0 {
				b.Fatal("the bare store kept a journal")
			}
		})
	}
}
