package hook

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/darman-dev/darman/agent"
)

// TranscriptDir is where a workspace's hook transcripts are: a directory
// of its own under the data directory, so that its hooks' sandbox may read
// it and no other workspace's.
func TranscriptDir(dataDir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dataDir, "transcripts", filepath.Base(root)+"-"+hex.EncodeToString(sum[:8]))
}

// TranscriptSource is the session store as the transcripts read it
// (cmd/darman adapts *store.Store).
type TranscriptSource interface {
	Session(ctx context.Context, id agent.ID) (agent.Session, error)
	Messages(ctx context.Context, id agent.ID) ([]agent.MessageWithParts, error)
	// Last is the session's last n messages, oldest first.
	Last(ctx context.Context, id agent.ID, n int) ([]agent.MessageWithParts, error)
}

// Transcripts writes the transcripts hooks read at transcript_path: one
// JSONL file per session in a directory (TranscriptDir), in Claude Code's
// line shape (TranscriptWriter), brought up to date from the store
// before the hooks of an event run, so that it holds the session up to
// that event. The first time in this process a session's file is written
// whole; after that only from the last few messages on (every message but
// a session's last is final: its tools have ended), so an event of a long
// session costs about what one of a short session does.
type Transcripts struct {
	store TranscriptSource
	dir   string
	root  string
	log   *slog.Logger

	mu      sync.Mutex
	written map[agent.ID]*transcriptState
}

// transcriptState is what a session's file holds: its final messages, in
// order, with the file's size and the uuid of the last line after each.
type transcriptState struct {
	sess  agent.Session
	ids   []agent.ID
	ends  []int64
	lasts []string
}

// NewTranscripts writes the transcripts of root's sessions, read from src,
// in dir; log nil logs nothing.
func NewTranscripts(src TranscriptSource, dir, root string, log *slog.Logger) *Transcripts {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Transcripts{store: src, dir: dir, root: root, log: log}
}

// Dir is the directory the transcripts are written in.
func (h *Transcripts) Dir() string { return h.dir }

// transcriptTail is how many of a session's last messages an update
// reads; more new messages than that since the last update rewrite the
// file whole.
const transcriptTail = 4

// Path brings the session's transcript up to date and returns its path;
// "" when it cannot be written (the hook then reads an empty
// transcript_path, and the log says why).
func (h *Transcripts) Path(ctx context.Context, session string) string {
	if h == nil || h.store == nil || session == "" {
		return ""
	}
	id := agent.ID(session)
	path := filepath.Join(h.dir, filepath.Base(session)+".jsonl")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.written == nil {
		h.written = map[agent.ID]*transcriptState{}
	}
	st := h.written[id]
	if st != nil {
		if _, err := os.Stat(path); err == nil {
			ok, err := h.extend(ctx, path, st)
			if err == nil && ok {
				return path
			}
			if err != nil {
				h.log.Debug("hook transcript: rewritten whole", "session", session, "err", err)
			}
		}
	}
	st, err := h.whole(ctx, id, path)
	if err != nil {
		delete(h.written, id)
		h.log.Warn("hook transcript: cannot write", "session", session, "path", path, "err", err)
		return ""
	}
	h.written[id] = st
	return path
}

// whole writes the session's transcript from its first message.
func (h *Transcripts) whole(ctx context.Context, id agent.ID, path string) (*transcriptState, error) {
	sess, err := h.store.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	msgs, err := h.store.Messages(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(h.dir, ".transcript-*")
	if err != nil {
		return nil, err
	}
	st := &transcriptState{sess: sess}
	err = st.write(tmp, 0, h.root, "", msgs)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Renamed into place: a hook never reads half a first file.
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	return st, nil
}

// extend rewrites the file from the first of the session's last few
// messages on; ok is false when that message is not one the file holds
// as final (more changed than the tail shows).
func (h *Transcripts) extend(ctx context.Context, path string, st *transcriptState) (ok bool, err error) {
	tail, err := h.store.Last(ctx, st.sess.ID, transcriptTail)
	if err != nil || len(tail) == 0 {
		return false, err
	}
	j := slices.Index(st.ids, tail[0].Message.ID)
	if j < 0 {
		return false, nil
	}
	var end int64
	after := ""
	if j > 0 {
		end, after = st.ends[j-1], st.lasts[j-1]
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return false, err
	}
	st.ids, st.ends, st.lasts = st.ids[:j], st.ends[:j], st.lasts[:j]
	err = f.Truncate(end)
	if err == nil {
		_, err = f.Seek(end, io.SeekStart)
	}
	if err == nil {
		err = st.write(f, end, h.root, after, tail)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err == nil, err
}

// write writes msgs at offset start of w, after the line uuid after, and
// records every message but the last as final.
func (st *transcriptState) write(w io.Writer, start int64, root, after string, msgs []agent.MessageWithParts) error {
	cw := &countingWriter{w: bufio.NewWriter(w), n: start}
	tw := NewTranscriptWriter(cw, root, st.sess, after)
	for i, m := range msgs {
		if err := tw.Message(m); err != nil {
			return err
		}
		if i < len(msgs)-1 {
			if err := cw.w.Flush(); err != nil {
				return err
			}
			st.ids = append(st.ids, m.Message.ID)
			st.ends = append(st.ends, cw.n)
			st.lasts = append(st.lasts, tw.Last())
		}
	}
	return cw.w.Flush()
}

// countingWriter counts what went through its buffer.
type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
