package client_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/mcp/client"
)

// gateFunc is a Gate that records what it was asked.
type gateFunc struct {
	mu   sync.Mutex
	seen []client.Elicitation
	f    func(context.Context, client.Elicitation) (client.ElicitAnswer, error)
}

func (g *gateFunc) Elicit(ctx context.Context, e client.Elicitation) (client.ElicitAnswer, error) {
	g.mu.Lock()
	g.seen = append(g.seen, e)
	g.mu.Unlock()
	return g.f(ctx, e)
}

// ready waits for m's servers and returns their tools.
func ready(t *testing.T, m *client.Manager) []tool.Tool {
	t.Helper()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	tools, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func callText(t *testing.T, m *client.Manager, name string) string {
	t.Helper()
	res, err := find(t, ready(t, m), name).Run(context.Background(), (&recorder{}).env(), json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	return res.Output
}

func TestElicitationAnsweredDeclinedUnanswered(t *testing.T) {
	t.Run("answered", func(t *testing.T) {
		g := &gateFunc{f: func(_ context.Context, e client.Elicitation) (client.ElicitAnswer, error) {
			return client.ElicitAnswer{Action: "accept", Content: map[string]any{"colour": "blue", "count": 3}}, nil
		}}
		reg := newRegistry(t)
		m := client.New([]client.Definition{fake(t, "s", "ok")}, client.Options{Children: reg, Gate: g})
		defer m.Close()
		if got := callText(t, m, "s_ask"); got != `accept {"colour":"blue","count":3}` {
			t.Errorf("ask = %q; want the human's values", got)
		}
		e := g.seen[0]
		if e.Server != "s" || e.Mode != "form" || e.Message != "Which colour?" || len(e.Fields) != 3 ||
			e.Fields[0].Name != "colour" || !e.Fields[0].Required || strings.Join(e.Fields[0].Enum, ",") != "red,blue" || e.Fields[1].Type != "integer" {
			t.Errorf("the gate saw %+v", e)
		}
		// What a prompt needs to start from and to check as the user
		// types: the default, the bounds, a string's format.
		if c := e.Fields[1]; c.Default != float64(2) || c.Minimum == nil || *c.Minimum != 1 || c.Maximum == nil || *c.Maximum != 9 {
			t.Errorf("count = %+v; want default 2, bounds 1..9", c)
		}
		if m := e.Fields[2]; m.Name != "email" || m.Format != "email" || m.Required {
			t.Errorf("email = %+v; want an optional string with format email", m)
		}
	})
	t.Run("invalid answer never reaches the server as accepted", func(t *testing.T) {
		g := &gateFunc{f: func(context.Context, client.Elicitation) (client.ElicitAnswer, error) {
			return client.ElicitAnswer{Action: "accept", Content: map[string]any{"colour": "green"}}, nil
		}}
		m := client.New([]client.Definition{fake(t, "s", "ok")}, client.Options{Children: newRegistry(t), Gate: g})
		defer m.Close()
		if got := callText(t, m, "s_ask"); !strings.Contains(got, "does not match requested schema") {
			t.Errorf("ask = %q; want the schema check to refuse green", got)
		}
	})
	t.Run("declined without a human", func(t *testing.T) {
		m := client.New([]client.Definition{fake(t, "s", "ok")}, client.Options{Children: newRegistry(t), Gate: client.DeclineGate{}})
		defer m.Close()
		if got := callText(t, m, "s_ask"); got != "decline null" {
			t.Errorf("ask = %q; want decline", got)
		}
	})
	t.Run("answered after the call's timeout", func(t *testing.T) {
		// The person's time is not the call's: the timeout stops while
		// the form is open. The call's own work (its round trips to a
		// race-built server) has 2 s, which a loaded machine may need.
		g := &gateFunc{f: func(context.Context, client.Elicitation) (client.ElicitAnswer, error) {
			time.Sleep(2500 * time.Millisecond)
			return client.ElicitAnswer{Action: "accept", Content: map[string]any{"colour": "red", "count": 1}}, nil
		}}
		d := fake(t, "s", "ok")
		d.CallTimeout = 2 * time.Second
		m := client.New([]client.Definition{d}, client.Options{Children: newRegistry(t), Gate: g})
		defer m.Close()
		if got := callText(t, m, "s_ask"); got != `accept {"colour":"red","count":1}` {
			t.Errorf("ask = %q; want the answer given after the call's timeout", got)
		}
	})
	t.Run("unanswered until the call is cancelled", func(t *testing.T) {
		asked, released := make(chan struct{}), make(chan error, 1)
		g := &gateFunc{f: func(ctx context.Context, _ client.Elicitation) (client.ElicitAnswer, error) {
			close(asked)
			<-ctx.Done()
			released <- ctx.Err()
			return client.ElicitAnswer{}, ctx.Err()
		}}
		d := fake(t, "s", "ok")
		d.CallTimeout = 300 * time.Millisecond
		m := client.New([]client.Definition{d}, client.Options{Children: newRegistry(t), Gate: g})
		defer m.Close()
		tools := ready(t, m)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-asked
			time.Sleep(time.Second) // nobody answers, well past the call's timeout
			cancel()
		}()
		if _, err := find(t, tools, "s_ask").Run(ctx, (&recorder{}).env(), json.RawMessage(`{}`)); err == nil {
			t.Error("a cancelled call returned no error")
		}
		if err := <-released; err == nil {
			t.Error("the gate was not released when the call ended")
		}
	})
	t.Run("no gate: not advertised", func(t *testing.T) {
		m := client.New([]client.Definition{fake(t, "s", "ok")}, client.Options{Children: newRegistry(t)})
		defer m.Close()
		if got := callText(t, m, "s_ask"); !strings.Contains(got, "client does not support elicitation") {
			t.Errorf("ask = %q; want the server refused for lack of the capability", got)
		}
	})
}

func TestElicitationOpenURL(t *testing.T) {
	g := &gateFunc{f: func(context.Context, client.Elicitation) (client.ElicitAnswer, error) {
		return client.ElicitAnswer{Action: "accept", Content: map[string]any{"ignored": true}}, nil
	}}
	m := client.New([]client.Definition{fake(t, "s", "ok")}, client.Options{Children: newRegistry(t), Gate: g})
	defer m.Close()
	if got := callText(t, m, "s_open_url"); got != "accept" {
		t.Errorf("open_url = %q; want accept", got)
	}
	if e := g.seen[0]; e.Mode != "url" || e.URL != "https://auth.example.com/start?state=abc" || e.ID != "el-1" || len(e.Fields) != 0 {
		t.Errorf("the gate saw %+v", e)
	}
}

// A URL that is not a web page (file:, command:, a custom scheme, control
// characters) is declined before anyone is asked: an editor or a terminal
// would hand it to the system to open.
func TestElicitationRefusesURLsThatAreNotWebPages(t *testing.T) {
	g := &gateFunc{f: func(context.Context, client.Elicitation) (client.ElicitAnswer, error) {
		return client.ElicitAnswer{Action: "accept"}, nil
	}}
	m := client.New([]client.Definition{fake(t, "s", "ok")}, client.Options{Children: newRegistry(t), Gate: g})
	defer m.Close()
	if got := callText(t, m, "s_open_local"); got != "decline" {
		t.Errorf("open_local = %q; want decline", got)
	}
	if len(g.seen) != 0 {
		t.Errorf("the gate was asked to open %q", g.seen[0].URL)
	}
}

// fakeSampler answers every request and records it.
type fakeSampler struct {
	mu   sync.Mutex
	reqs []client.SampleRequest
}

func (s *fakeSampler) Sample(_ context.Context, req client.SampleRequest) (client.SampleResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	return client.SampleResult{Model: "test/model", Text: "hi there", StopReason: "endTurn", InputTokens: 12, OutputTokens: 3}, nil
}

func TestSamplingOnlyWithPolicy(t *testing.T) {
	sm := &fakeSampler{}
	allowed := fake(t, "allowed", "ok")
	allowed.SamplingMaxTokens = 50
	m := client.New([]client.Definition{allowed, fake(t, "plain", "ok")}, client.Options{Children: newRegistry(t), Sampler: sm})
	defer m.Close()
	if got := callText(t, m, "allowed_sample"); got != "test/model: hi there" {
		t.Errorf("allowed_sample = %q", got)
	}
	if got := callText(t, m, "plain_sample"); got != "sampling not advertised" {
		t.Errorf("plain_sample = %q; a server without a sampling policy must not see the capability", got)
	}
	if len(sm.reqs) != 1 || sm.reqs[0].Server != "allowed" || sm.reqs[0].MaxTokens != 50 || sm.reqs[0].System != "Be brief." {
		t.Errorf("sampler saw %+v; want one request from allowed, capped at 50 tokens", sm.reqs)
	}
	for _, st := range m.Status() {
		want := client.SamplingUsage{}
		if st.Name == "allowed" {
			want = client.SamplingUsage{Requests: 1, InputTokens: 12, OutputTokens: 3}
		}
		if st.Sampling != want {
			t.Errorf("%s: sampling usage %+v; want %+v", st.Name, st.Sampling, want)
		}
	}
}

// newRegistry is a child registry checked for leftovers at the test's end.
func newRegistry(t *testing.T) *child.Registry {
	reg := &child.Registry{}
	t.Cleanup(func() {
		if live := reg.Live(); len(live) != 0 {
			t.Errorf("process groups left after Close: %v", live)
		}
	})
	return reg
}
