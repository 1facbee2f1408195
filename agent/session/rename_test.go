package session_test

import (
	"context"
	"github.com/darman-dev/darman/agent/session"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

func TestRename(t *testing.T) {
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{{Text: "hello"}}}, nil)
	ctx := context.Background()
	if err := f.svc.Rename(ctx, f.sess.ID, "  parser work \t"); err != nil {
		t.Fatal(err)
	}
	// The first prompt names an untitled session only: the user's name
	// stays.
	if _, err := f.svc.Run(ctx, session.Turn{Session: f.sess.ID, Prompt: session.Text("say hello")}); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.Session(ctx, f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "parser work" || got.Messages != 2 {
		t.Errorf("after rename and a turn: title %q, %d messages; want %q and 2", got.Title, got.Messages, "parser work")
	}

	for _, bad := range []struct{ title, want string }{
		{" ", "empty"},
		{"two\nlines", "line break"},
		{strings.Repeat("x", 201), "longer than 200"},
	} {
		if err := f.svc.Rename(ctx, f.sess.ID, bad.title); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Rename(%q): %v, want an error saying %q", bad.title, err, bad.want)
		}
	}
	if err := f.svc.Rename(ctx, "ses_00000000000000000000000000", "x"); err == nil {
		t.Error("renaming a session that does not exist succeeded")
	}
	if got, _ := f.store.Session(ctx, f.sess.ID); got.Title != "parser work" {
		t.Errorf("a refused rename changed the title to %q", got.Title)
	}
}
