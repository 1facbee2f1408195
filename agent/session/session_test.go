package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/llm/provider"
	"github.com/darman-dev/darman/agent/permission"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
	"github.com/darman-dev/darman/agent/tool"
)

// probe is a tool whose behaviour the test controls: it reports its input,
// counts how many calls run at once, and can block until cancelled.
type probe struct {
	name     string
	readOnly bool
	block    bool
	started  chan string
	// together makes each call wait (up to 10 s) until this many run at
	// once: calls run side by side then meet however late the machine
	// starts the second, and calls run one after another time out apart.
	together int32
	running  atomic.Int32
	maxSeen  atomic.Int32
}

func (p *probe) Info() tool.Info {
	return tool.Info{Name: p.name, Description: "a probe", Schema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`),
		Kind: agent.ToolKindRead, ReadOnly: p.readOnly}
}

func (p *probe) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	n := p.running.Add(1)
	defer p.running.Add(-1)
	for {
		m := p.maxSeen.Load()
		if n <= m || p.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	for deadline := time.Now().Add(10 * time.Second); p.running.Load() < p.together && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if p.started != nil {
		p.started <- string(input)
	}
	if p.block {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}
	time.Sleep(20 * time.Millisecond) // long enough for parallel calls to overlap
	return tool.Result{Output: "probed " + string(input), Title: p.name}, nil
}

type fixture struct {
	srv   *llmtest.Server
	store *store.Store
	svc   *session.Service
	sess  agent.Session
}

func setup(t *testing.T, script llmtest.Script, asker permission.Asker, tools ...tool.Tool) *fixture {
	t.Helper()
	return newFixture(t, fixtureOptions{script: script, asker: asker, tools: tools})
}

// fixtureOptions change the fixture's defaults.
type fixtureOptions struct {
	script llmtest.Script
	asker  permission.Asker
	tools  []tool.Tool
	// models overrides the catalog's entries (a tiny context window).
	models map[string]llm.ModelOverride
	// root is the workspace; "" makes an empty one.
	root string
	// service changes the service's options before it is made.
	service func(*session.Options)
	// http sends the model calls; nil means the provider's own client.
	http *http.Client
}

func newFixture(t testing.TB, o fixtureOptions) *fixture {
	t.Helper()
	srv := llmtest.Start(t, o.script)
	st, err := store.Open(context.Background(), t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	client, err := provider.New(provider.Settings{Name: "anthropic", BaseURL: srv.URL, APIKey: "sk-ant-test-key-0000", Models: o.models}, &provider.Options{
		Retry:      llm.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond},
		HTTPClient: o.http,
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.root == "" {
		o.root = t.TempDir()
	}
	opts := session.Options{
		Store:     st,
		Models:    func(string) (llm.Provider, string, error) { return client, "claude-sonnet-4-5", nil },
		Workspace: tool.NewDisk(o.root),
		Tools:     o.tools,
		Rules:     []permission.Rule{{Permission: "*", Pattern: "*", Action: permission.Allow}, {Permission: permission.DoomLoop, Pattern: "*", Action: permission.Ask}},
		Asker:     o.asker,
	}
	if o.service != nil {
		o.service(&opts)
	}
	svc, err := session.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	sess, err := svc.Create(context.Background(), session.CreateOptions{Model: "anthropic/claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, store: st, svc: svc, sess: sess}
}

// events collects a session's events until the turn ends.
func (f *fixture) events(t *testing.T) func() []agent.Event {
	sub, err := f.svc.Subscribe(context.Background(), f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []agent.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range sub.C() {
			out = append(out, d.Event)
			// A sub-task's turn ends with its own state event, nested under
			// the parent's task call.
			if d.Event.Kind == agent.EventState && d.Event.ParentCallID == "" && (d.Event.State == agent.StateIdle || d.Event.State == agent.StateFailed) {
				return
			}
		}
	}()
	return func() []agent.Event {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the turn's final state was never published")
		}
		sub.Unsubscribe()
		return out
	}
}

func TestTurnWithParallelReadOnlyTools(t *testing.T) {
	p := &probe{name: "probe", readOnly: true, together: 2}
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{
		{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{
			{ID: "call_a", Name: "probe", Arguments: json.RawMessage(`{"x":"a"}`)},
			{ID: "call_b", Name: "probe", Arguments: json.RawMessage(`{"x":"b"}`)},
		}},
		{Text: "Both probes answered."},
	}}, nil, p)
	wait := f.events(t)

	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("probe twice")})
	if err != nil {
		t.Fatal(err)
	}
	evs := wait()
	if msg.Finish != agent.FinishStop {
		t.Fatalf("finish = %q (%s)", msg.Finish, msg.Error)
	}
	if p.maxSeen.Load() != 2 {
		t.Errorf("read-only calls ran %d at a time, want 2", p.maxSeen.Load())
	}

	// What the model got back on the second call: both results, linked.
	calls := f.srv.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls", len(calls))
	}
	body := string(calls[1].Body)
	for _, want := range []string{`"tool_use_id":"call_a"`, `"tool_use_id":"call_b"`, `probed {\"x\":\"a\"}`, `probed {\"x\":\"b\"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("second request lacks %s:\n%s", want, body)
		}
	}

	// What the store holds.
	msgs, err := f.store.Messages(context.Background(), f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("%d messages stored, want user + 2 assistant", len(msgs))
	}
	var tools, texts []string
	for _, m := range msgs[1:] {
		for _, part := range m.Parts {
			switch part.Kind {
			case agent.PartTool:
				tools = append(tools, fmt.Sprintf("%s %s %s", part.Tool.CallID, part.Tool.Status, part.Tool.Output))
			case agent.PartText:
				texts = append(texts, part.Text)
			}
		}
	}
	wantTools := []string{`call_a completed probed {"x":"a"}`, `call_b completed probed {"x":"b"}`}
	if fmt.Sprint(tools) != fmt.Sprint(wantTools) || fmt.Sprint(texts) != "[Let me look. Both probes answered.]" {
		t.Errorf("stored tools %q, texts %q", tools, texts)
	}
	sess, _ := f.store.Session(context.Background(), f.sess.ID)
	if sess.Title != "probe twice" || sess.Messages != 3 || sess.Usage.Output == 0 {
		t.Errorf("session after the turn: %+v", sess)
	}

	// The events tell the same story, in order.
	var kinds []string
	var answer strings.Builder
	for _, e := range evs {
		if e.Kind == agent.EventMessageChunk {
			answer.WriteString(e.Text)
			continue
		}
		k := string(e.Kind)
		if e.Tool != nil {
			k += ":" + string(e.Tool.Status)
		}
		if e.State != "" {
			k += ":" + string(e.State)
		}
		kinds = append(kinds, k)
	}
	if answer.String() != "Let me look.Both probes answered." {
		t.Errorf("streamed answer %q", answer.String())
	}
	first, last := kinds[:2], kinds[len(kinds)-1]
	if fmt.Sprint(first) != "[user_message state:running]" || last != "state:idle" {
		t.Errorf("events %v", kinds)
	}
	for _, want := range []string{"tool_call:pending", "tool_call_update:running", "tool_call_update:completed", "usage"} {
		if !strings.Contains(strings.Join(kinds, " "), want) {
			t.Errorf("no %s event in %v", want, kinds)
		}
	}
}

func TestMutatingToolsRunOneAtATimeInOrder(t *testing.T) {
	p := &probe{name: "mutate", started: make(chan string, 3)}
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			{Name: "mutate", Arguments: json.RawMessage(`{"x":"1"}`)},
			{Name: "mutate", Arguments: json.RawMessage(`{"x":"2"}`)},
			{Name: "mutate", Arguments: json.RawMessage(`{"x":"3"}`)},
		}},
		{Text: "done"},
	}}, nil, p)
	if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("mutate")}); err != nil {
		t.Fatal(err)
	}
	close(p.started)
	var order []string
	for s := range p.started {
		order = append(order, s)
	}
	if p.maxSeen.Load() != 1 || fmt.Sprint(order) != `[{"x":"1"} {"x":"2"} {"x":"3"}]` {
		t.Fatalf("mutating calls: %d at a time, order %v", p.maxSeen.Load(), order)
	}
}

func TestCancelMidToolLeavesSessionUsable(t *testing.T) {
	p := &probe{name: "wait", block: true, started: make(chan string, 1)}
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "wait"}}},
		{Text: "still here"},
	}}, nil, p)
	wait := f.events(t)
	type result struct {
		msg session.Result
		err error
	}
	res := make(chan result, 1)
	go func() {
		m, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("block please")})
		res <- result{m, err}
	}()
	<-p.started
	if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("again")}); !errors.Is(err, session.ErrBusy) {
		t.Fatalf("a prompt during a turn: %v, want ErrBusy", err)
	}
	cancelled := time.Now()
	if !f.svc.Cancel(f.sess.ID) {
		t.Fatal("Cancel found no running turn")
	}
	var r result
	select {
	case r = <-res:
	case <-time.After(time.Minute):
		// The tool waits for its context's end: only the cancel ends the
		// turn. The bound catches a turn that never stops, not a slow
		// one (a loaded machine can take over a second).
		t.Fatal("the turn did not stop within a minute of Cancel")
	}
	t.Logf("stopped %v after Cancel", time.Since(cancelled))
	if r.err != nil || r.msg.Finish != agent.FinishCancelled {
		t.Fatalf("cancelled turn: %+v, %v", r.msg, r.err)
	}
	wait()
	msgs, _ := f.store.Messages(context.Background(), f.sess.ID)
	tp := msgs[1].Parts[0].Tool
	if tp.Status != agent.ToolFailed || !strings.Contains(tp.Error, "cancelled") {
		t.Fatalf("the blocked call was recorded as %s %q", tp.Status, tp.Error)
	}
	// The session goes on; the cancelled call is answered in the history.
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("again")})
	if err != nil || msg.Finish != agent.FinishStop {
		t.Fatalf("next turn: %+v, %v", msg, err)
	}
}

// scriptedAsker answers every question the same way and records them.
type scriptedAsker struct {
	reply permission.Reply
	mu    sync.Mutex
	asked []permission.Request
}

func (a *scriptedAsker) Ask(ctx context.Context, req permission.Request) (permission.Reply, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	return a.reply, nil
}

func TestDoomLoopAsks(t *testing.T) {
	p := &probe{name: "probe"}
	same := llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "probe", Arguments: json.RawMessage(`{"x":"same"}`)}}}
	asker := &scriptedAsker{reply: permission.Reply{Answer: permission.RejectOnce, Message: "stop repeating"}}
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{same, same, same, {Text: "ok, something else"}}}, asker, p)
	if _, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("loop")}); err != nil {
		t.Fatal(err)
	}
	if len(asker.asked) != 1 || asker.asked[0].Permission != permission.DoomLoop {
		t.Fatalf("asked %+v, want one doom_loop question", asker.asked)
	}
	msgs, _ := f.store.Messages(context.Background(), f.sess.ID)
	third := msgs[3].Parts[0].Tool
	if third.Status != agent.ToolFailed || !strings.Contains(third.Error, "stop repeating") {
		t.Fatalf("third identical call: %s %q", third.Status, third.Error)
	}
}

func TestModelFailureFailsTheTurn(t *testing.T) {
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{{Text: "never", Faults: []llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 500, Times: -1}}}}}, nil)
	wait := f.events(t)
	msg, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID, Prompt: session.Text("hello")})
	if err != nil {
		t.Fatal(err)
	}
	evs := wait()
	if msg.Finish != agent.FinishError || msg.Error == "" {
		t.Fatalf("finish %q error %q", msg.Finish, msg.Error)
	}
	last := evs[len(evs)-1]
	if last.State != agent.StateFailed || last.Reason != msg.Error {
		t.Fatalf("last event %+v", last)
	}
	var retried bool
	for _, e := range evs {
		retried = retried || e.Kind == agent.EventRetry
	}
	if !retried {
		t.Error("the retry was not announced")
	}
}
