package main

import (
	"context"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// A record the store cannot keep (text that is not UTF-8) put while the
// store opens fails as the store's own put would, instead of panicking
// darman; what was held before it is stored once the store is open.
func TestEarlyStoreRefusesARecordTheStoreCannotKeep(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	e := openEarly(func() (*store.Store, error) {
		<-release
		return store.Open(context.Background(), dir, store.Options{})
	}, true)
	defer e.Close()
	ctx := context.Background()
	now := time.Now()
	sess := agent.Session{ID: agent.NewSessionID(), Workspace: t.TempDir(), Title: "t", Created: now, Updated: now}
	msg := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: agent.RoleUser, Created: now}
	if err := e.PutSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if err := e.PutMessage(ctx, msg); err != nil {
		t.Fatal(err)
	}
	bad := agent.Part{ID: agent.NewPartID(), MessageID: msg.ID, SessionID: sess.ID, Kind: agent.PartText, Text: "caf\xe9"}
	if err := e.PutPart(ctx, bad); err == nil {
		t.Fatal("a part that is not UTF-8 was held as if the store could keep it")
	}
	bad.Text = "café"
	if err := e.PutPart(ctx, bad); err != nil {
		t.Fatal(err)
	}
	close(release)
	st, err := e.store(ctx)
	if err != nil {
		t.Fatalf("the held records were not stored: %v", err)
	}
	msgs, err := st.Messages(ctx, sess.ID)
	if err != nil || len(msgs) != 1 || len(msgs[0].Parts) != 1 || msgs[0].Parts[0].Text != "café" {
		t.Fatalf("stored: %+v, %v; want the message with its one part", msgs, err)
	}
}
