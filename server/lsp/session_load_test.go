package lsp_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/store"
)

// longSession writes a session of n messages, alternately the user's and
// the assistant's, each with parts text parts saying "m<i>p<j>", straight
// into the store the server reads.
func longSession(t testing.TB, st *store.Store, workspace string, n, parts int) agent.ID {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sess := agent.Session{ID: agent.NewSessionID(), Workspace: workspace, Title: "long", Created: at, Updated: at, Model: testModel}
	if err := st.PutSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		role := agent.RoleUser
		if i%2 == 1 {
			role = agent.RoleAssistant
		}
		m := agent.Message{ID: agent.NewMessageID(), SessionID: sess.ID, Role: role, Created: at.Add(time.Duration(i) * time.Millisecond)}
		if role == agent.RoleAssistant {
			m.Finish = agent.FinishStop
		}
		if err := st.PutMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		for j := range parts {
			p := agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: sess.ID, Kind: agent.PartText, Text: fmt.Sprintf("m%dp%d", i, j)}
			if err := st.PutPart(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return sess.ID
}

type loaded struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	State     string `json:"state"`
	Updates   []struct {
		SessionUpdate string `json:"sessionUpdate"`
		Content       struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"updates"`
	More           bool   `json:"more"`
	FirstMessageID string `json:"firstMessageId"`
}

func (l loaded) texts() []string {
	var out []string
	for _, u := range l.Updates {
		out = append(out, u.Content.Text)
	}
	return out
}

// A long session opens with its last page, and the client reads the older
// ones by asking before the first message it has, until more is false:
// the pages together are the whole history, in order, each message once.
func TestSessionLoadPages(t *testing.T) {
	e := start(t, options{})
	id := longSession(t, e.store, e.root, 250, 2)

	var first loaded
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": string(id)}, &first)
	if first.SessionID != string(id) || first.Title != "long" || first.State != "idle" {
		t.Errorf("the session is %+v", first)
	}
	if len(first.Updates) != 200 || !first.More || first.FirstMessageID == "" {
		t.Fatalf("the first answer has %d updates, more %v, firstMessageId %q; want the last 100 messages' 200 parts and more",
			len(first.Updates), first.More, first.FirstMessageID)
	}
	if got := first.texts(); got[0] != "m150p0" || got[199] != "m249p1" {
		t.Errorf("the last page runs from %q to %q, want m150p0 to m249p1", got[0], got[199])
	}
	if first.Updates[0].SessionUpdate != "user_message_chunk" || first.Updates[2].SessionUpdate != "agent_message_chunk" {
		t.Errorf("the page's updates are %s, %s", first.Updates[0].SessionUpdate, first.Updates[2].SessionUpdate)
	}

	all := first.texts()
	page := first
	for pages := 1; page.More; pages++ {
		if pages > 10 {
			t.Fatal("the pages never end")
		}
		var older loaded
		e.client.mustCommand("darman.session.load", map[string]any{"sessionId": string(id), "before": page.FirstMessageID, "limit": 60}, &older)
		if len(older.Updates) == 0 {
			t.Fatalf("a page before %s is empty but the last said more", page.FirstMessageID)
		}
		all = append(older.texts(), all...)
		page = older
	}
	if len(all) != 500 {
		t.Fatalf("the pages hold %d parts, want 500", len(all))
	}
	for i, text := range all {
		if want := fmt.Sprintf("m%dp%d", i/2, i%2); text != want {
			t.Fatalf("part %d of the history is %q, want %q", i, text, want)
		}
	}
}

// An interrupted answer is marked on the page that holds it.
func TestSessionLoadPageMarksInterrupted(t *testing.T) {
	e := start(t, options{})
	id := longSession(t, e.store, e.root, 3, 1)
	ctx := context.Background()
	m := agent.Message{ID: agent.NewMessageID(), SessionID: id, Role: agent.RoleAssistant}
	if err := e.store.PutMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := e.store.PutPart(ctx, agent.Part{ID: agent.NewPartID(), MessageID: m.ID, SessionID: id, Kind: agent.PartText, Text: "half an ans"}); err != nil {
		t.Fatal(err)
	}
	var l loaded
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": string(id), "limit": 1}, &l)
	if len(l.Updates) != 2 || l.Updates[0].Content.Text != "half an ans" || l.Updates[1].SessionUpdate != "notice" || !l.More {
		t.Errorf("the last page of one message is %+v, want its text, then the interrupted notice, and more", l)
	}
}

// Bad paging arguments are the client's error, saying what to pass.
func TestSessionLoadBadArguments(t *testing.T) {
	e := start(t, options{})
	id := string(longSession(t, e.store, e.root, 2, 1))
	for _, c := range []struct {
		arg  map[string]any
		want string
	}{
		{map[string]any{"sessionId": id, "before": "not-an-id"}, "before"},
		{map[string]any{"sessionId": id, "before": id}, "before"},
		{map[string]any{"sessionId": id, "limit": 5000}, "limit is 5000"},
		{map[string]any{"sessionId": id, "limit": -1}, "limit is -1"},
		{map[string]any{"sessionId": id, "page": 2}, "page"},
		{map[string]any{"before": "msg_x"}, "sessionId is required"},
	} {
		err := e.client.command("darman.session.load", c.arg, nil)
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(je.Message, c.want) {
			t.Errorf("darman.session.load %v: %v, want invalid params saying %q", c.arg, err, c.want)
		}
	}
	// A before that names no message of the session still pages: it is a
	// place in the history, and one past its end is the whole of it.
	var l loaded
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": id, "before": string(agent.NewMessageID())}, &l)
	if len(l.Updates) != 2 || l.More {
		t.Errorf("before a message newer than all: %+v", l)
	}
}

// A turn that failed or was cancelled keeps saying so in the history: its
// last answer ends with the state the live turn ended with.
func TestSessionLoadKeepsFailuresAndCancels(t *testing.T) {
	e := start(t, options{})
	id := longSession(t, e.store, e.root, 1, 1)
	ctx := context.Background()
	for _, m := range []agent.Message{
		{ID: agent.NewMessageID(), SessionID: id, Role: agent.RoleAssistant, Finish: agent.FinishError, Error: "the model went away"},
		{ID: agent.NewMessageID(), SessionID: id, Role: agent.RoleAssistant, Finish: agent.FinishCancelled},
	} {
		if err := e.store.PutMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var l struct {
		Updates []struct {
			SessionUpdate string `json:"sessionUpdate"`
			State         string `json:"state"`
			Error         *struct {
				Message string `json:"message"`
			} `json:"error"`
		} `json:"updates"`
	}
	e.client.mustCommand("darman.session.load", map[string]any{"sessionId": string(id)}, &l)
	var states []string
	for _, u := range l.Updates {
		if u.SessionUpdate == "state_update" {
			s := u.State
			if u.Error != nil {
				s += ": " + u.Error.Message
			}
			states = append(states, s)
		}
	}
	if want := []string{"failed: the model went away", "cancelled"}; fmt.Sprint(states) != fmt.Sprint(want) {
		t.Errorf("the history's states are %q, want %q", states, want)
	}
}
