package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// TestValueLogFilesStayBounded: badger starts a value-log file at every
// open for writing, so each short-lived process that stores a big value
// (a command's 8 KiB output) leaves one; the store folds them after its
// answer, so that their count, which every open and close pays for, stays
// bounded, and every value still reads back.
func TestValueLogFilesStayBounded(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	type kept struct {
		session agent.ID
		text    string
	}
	var all []kept
	most := 0
	for i := range 60 {
		s, err := store.Open(ctx, dir, store.Options{GCInterval: -1, Wait: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		sess := newSession("/w", t0)
		m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleAssistant, Created: t0}
		text := fmt.Sprintf("output of command %d\n", i) + strings.Repeat(fmt.Sprintf("line %d\n", i), 1200)
		p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartText, Text: text}
		for _, err := range []error{s.PutSession(ctx, sess), s.PutMessage(ctx, m), s.PutPart(ctx, p)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		all = append(all, kept{sess.ID, text})
		most = max(most, valueLogs(t, dir))
	}
	// A fold starts past 16 files; its files go at the next fold.
	if most > 20 {
		t.Errorf("the store kept up to %d value-log files after 60 processes that each stored an 8 KiB value; want at most 20", most)
	}
	s := open(t, dir)
	for i, k := range all {
		msgs, err := s.Messages(ctx, k.session)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 || len(msgs[0].Parts) != 1 || msgs[0].Parts[0].Text != k.text {
			t.Errorf("process %d's output does not read back (%d messages)", i, len(msgs))
		}
	}
}
