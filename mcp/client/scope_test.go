package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/mcp/client"
)

func names(tools []tool.Tool) []string {
	var out []string
	for _, t := range tools {
		if strings.HasSuffix(t.Info().Name, "_echo") {
			out = append(out, t.Info().Name)
		}
	}
	slices.Sort(out)
	return out
}

// A session's own binding serves only that session; a workspace binding
// with a visibility list only those it names; a required session binding
// that fails blocks its session and nobody else.
func TestAudiences(t *testing.T) {
	shared := fake(t, "shared", "ok")
	mine := fake(t, "mine", "ok")
	mine.Session = "ses_a"
	planner := fake(t, "planner", "ok")
	planner.Visible = []string{"agent-plan*"}
	helper := fake(t, "helper", "ok")
	helper.Visible = []string{"task"}
	lead := fake(t, "lead", "ok")
	lead.Visible = []string{"main"}
	broken := client.Definition{Name: "broken", Command: "darman-no-such-mcp-server", Required: true, Session: "ses_b"}
	m, _ := newManager(t, shared, mine, planner, helper, lead, broken)
	_ = m.Wait(context.Background())
	for _, tc := range []struct {
		a    client.Audience
		want []string
	}{
		{client.Audience{}, []string{"shared_echo"}},
		{client.Audience{Session: "ses_a"}, []string{"mine_echo", "shared_echo"}},
		{client.Audience{Session: "ses_c", Agent: "agent-planner"}, []string{"planner_echo", "shared_echo"}},
		{client.Audience{Session: "ses_a", Agent: "main"}, []string{"lead_echo", "mine_echo", "shared_echo"}},
		// A sub-agent of ses_a sees ses_a's own server and the task-only
		// one, not the main agent's.
		{client.Audience{Session: "ses_child", Agent: "task", Parent: "ses_a"}, []string{"helper_echo", "mine_echo", "shared_echo"}},
		{client.Audience{Session: "ses_other", Agent: "task", Parent: "ses_c"}, []string{"helper_echo", "shared_echo"}},
	} {
		tools, err := m.Source(tc.a).Tools(context.Background())
		if err != nil {
			t.Errorf("%+v: %v", tc.a, err)
		}
		if got := names(tools); !slices.Equal(got, tc.want) {
			t.Errorf("%+v sees %q; want %q", tc.a, got, tc.want)
		}
	}
	// A session's source works out its audience from its parent, once:
	// a session with a parent is the task agent, any other the main one.
	for _, tc := range []struct {
		session, parent string
		want            []string
	}{
		{"ses_a", "", []string{"lead_echo", "mine_echo", "shared_echo"}},
		{"ses_child", "ses_a", []string{"helper_echo", "mine_echo", "shared_echo"}},
	} {
		asked := 0
		src := m.SessionSource(tc.session, func(context.Context) (string, error) { asked++; return tc.parent, nil })
		for range 2 {
			tools, err := src.Tools(context.Background())
			if got := names(tools); err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("session %s (parent %q) sees %q, %v; want %q", tc.session, tc.parent, got, err, tc.want)
			}
		}
		if asked != 1 {
			t.Errorf("session %s: its parent was asked %d times; want once", tc.session, asked)
		}
	}
	unknown := m.SessionSource("ses_x", func(context.Context) (string, error) { return "", errors.New("no session ses_x") })
	if _, err := unknown.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "no session ses_x") {
		t.Errorf("a session whose parent cannot be read: %v; want that error", err)
	}
	if _, err := m.ToolsFor(context.Background(), client.Audience{Session: "ses_b"}); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("ses_b: %v; want its required server's failure", err)
	}
	for _, s := range m.Status() {
		if s.Name == "helper" && !slices.Equal(s.Visible, []string{"task"}) || s.Name == "shared" && s.Visible != nil {
			t.Errorf("%s's status shows visibility %q", s.Name, s.Visible)
		}
	}
}

// A malformed visibility pattern fails that binding as an invalid config,
// naming the pattern; the other servers keep working.
func TestMalformedVisibility(t *testing.T) {
	bad := fake(t, "bad", "ok")
	bad.Visible = []string{"[task"}
	m, _ := newManager(t, bad, fake(t, "good", "ok"))
	_ = m.Wait(context.Background())
	st := m.Status()
	if st[0].State != client.StateFailed || st[0].Failure == nil || st[0].Failure.Class != client.FailureInvalidConfig ||
		!strings.Contains(st[0].Failure.Message, `visibility pattern "[task" is malformed`) {
		t.Errorf("bad = %+v %+v; want an invalid config naming the pattern", st[0], st[0].Failure)
	}
	if st[1].State != client.StateReady {
		t.Errorf("good = %s; want ready", st[1].State)
	}
}

// Subscribers hear every state change; a retiring manager offers no tools
// to new turns, lets a call in flight finish, then stops.
func TestSubscribeAndRetire(t *testing.T) {
	m, _ := newManager(t, fake(t, "s", "ok"))
	var (
		mu     sync.Mutex
		states []client.State
	)
	stop := m.Subscribe(func(st client.Status) {
		mu.Lock()
		defer mu.Unlock()
		if len(states) == 0 || states[len(states)-1] != st.State {
			states = append(states, st.State)
		}
	})
	defer stop()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	tools, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan tool.Result, 1)
	go func() {
		res, err := find(t, tools, "s_slow_then_add").Run(context.Background(), (&recorder{}).env(), json.RawMessage(`{}`))
		if err != nil {
			res = tool.Result{Output: err.Error(), IsError: true}
		}
		done <- res
	}()
	waitFor(t, "the call to start", func() bool {
		// The slow tool adds a tool, so a new generation shows it started.
		return m.Status()[0].Generation >= 2
	})
	retired := make(chan struct{})
	go func() {
		m.Retire(context.Background())
		close(retired)
	}()
	waitFor(t, "retiring", func() bool { return m.Status()[0].State == client.StateRetiring })
	if now, err := m.Tools(context.Background()); err != nil || len(now) != 0 {
		t.Errorf("a retiring manager offered %d tools (%v); want none", len(now), err)
	}
	if res := <-done; res.IsError || res.Output != "slow done" {
		t.Errorf("the call in flight = %+v; want it finished", res)
	}
	select {
	case <-retired:
	case <-time.After(30 * time.Second):
		t.Fatal("Retire did not return after the last call")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []client.State{client.StateStarting, client.StateReady, client.StateRetiring} {
		if !slices.Contains(states, want) {
			t.Errorf("subscriber saw %q; want %q among them", states, want)
		}
	}
}
