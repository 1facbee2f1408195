package lsp_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
)

type sessionPage struct {
	Sessions []struct {
		SessionID string `json:"sessionId"`
	} `json:"sessions"`
	NextCursor string `json:"nextCursor"`
}

// darman.session.list pages: limit and the cursor of the page before give
// the workspace's sessions, most recently updated first, the same as the
// list without a limit; another workspace's sessions are not in it; a
// limit out of range is refused.
func TestSessionListPages(t *testing.T) {
	e := start(t, options{})
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range 23 {
		ws := e.root
		if i%4 == 3 {
			ws = "/elsewhere"
		}
		at := t0.Add(time.Duration(i%5) * time.Minute)
		s := agent.Session{ID: agent.NewSessionID(), Workspace: ws, Title: fmt.Sprintf("s%d", i), Created: at, Updated: at}
		if err := e.store.PutSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var whole sessionPage
	e.client.mustCommand("darman.session.list", nil, &whole)
	if len(whole.Sessions) != 18 || whole.NextCursor != "" {
		t.Fatalf("the whole list: %d sessions, next %q", len(whole.Sessions), whole.NextCursor)
	}
	var got []string
	cursor := ""
	for range 10 {
		arg := map[string]any{"limit": 5}
		if cursor != "" {
			arg["cursor"] = cursor
		}
		var page sessionPage
		e.client.mustCommand("darman.session.list", arg, &page)
		for _, s := range page.Sessions {
			got = append(got, s.SessionID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	var want []string
	for _, s := range whole.Sessions {
		want = append(want, s.SessionID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("by pages of 5:\n%v\nwithout a limit:\n%v", got, want)
	}
	for _, limit := range []int{-1, 1001} {
		err := e.client.command("darman.session.list", map[string]any{"limit": limit}, nil)
		if err == nil || !strings.Contains(err.Error(), "limit must be between 1 and 1000") {
			t.Errorf("limit %d: %v", limit, err)
		}
	}
}
