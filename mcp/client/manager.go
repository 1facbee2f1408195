package client

import (
	"context"
	"log/slog"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent/tool"
	"github.com/darman-dev/darman/internal/child"
)

// Options configure a Manager. Every field is optional.
type Options struct {
	// Logger receives bindings' state changes and servers' stderr (debug
	// level, bounded); nil discards.
	Logger *slog.Logger
	// Children records local servers' process groups; nil records none.
	Children *child.Registry
	// Sampler serves sampling requests of the servers configured for it;
	// nil makes a server configured for sampling an invalid config.
	Sampler Sampler
	// Gate takes servers' elicitations (form and open-URL) to a human;
	// nil does not advertise elicitation, so servers do not ask.
	Gate Gate
	// Version is darman's version, sent to servers; "" sends "dev".
	Version string
	// Sessions, when its Dir is set, records the bindings' identities per
	// session at the session's first MCP call, and compares them with the
	// last record: what changed is told to the model (before that call's
	// output) and to OnDrift.
	Sessions SessionRecord
	// OnDrift hears the drift of a resumed session; nil ignores it.
	OnDrift func(session string, drift []string)
	// FilesDir is where images returned by tools are saved, one
	// directory per session; "" keeps them only in the result.
	FilesDir string
	// ProtocolCache is a file remembering which servers speak only
	// initialize, so later runs skip the server/discover probe for them
	// (see the package doc); "" remembers for this Manager's life only.
	ProtocolCache string
	// Now is the clock for restart backoff; nil is time.Now.
	Now func() time.Time
}

// Sampler answers a server's request for a model completion.
type Sampler interface {
	// Sample runs one completion of at most req.MaxTokens tokens. It is
	// called concurrently.
	Sample(ctx context.Context, req SampleRequest) (SampleResult, error)
}

// SampleRequest is a server's sampling request, already capped.
type SampleRequest struct {
	// Server names the server that asked, for attribution and budgets.
	Server    string
	System    string
	Messages  []SampleMessage
	MaxTokens int
}

// SampleMessage is one message of a sampling request.
type SampleMessage struct {
	Role string // "user" or "assistant"
	Text string
}

// SampleResult is a completion; Model is required. The token counts are
// charged to the server that asked (see Status.Sampling) and to the
// session it served (tool.Env.Charge; see the package doc).
type SampleResult struct {
	Model, Text, StopReason   string
	InputTokens, OutputTokens int
	// Cost is what the completion cost in USD, 0 when unknown.
	Cost float64
}

// SamplingUsage is what a server's sampling requests have spent.
type SamplingUsage struct {
	Requests     int `json:"requests"`
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// Status is one binding as people see it.
type Status struct {
	Name   string `json:"name"`
	Origin string `json:"origin"` // redacted: see Definition.RedactedOrigin
	// ConfigFile is the file the server was configured in, "" if unknown.
	ConfigFile string `json:"configFile,omitempty"`
	Transport  string `json:"transport"`
	Required   bool   `json:"required"`
	// Visible are the patterns of the sessions and agents that see the
	// binding (Definition.Visible); empty: everyone.
	Visible []string `json:"visible,omitempty"`
	State   State    `json:"state"`
	// Failure is set in StateFailed.
	Failure *Failure `json:"failure,omitempty"`
	// Protocol, Tools and Generation describe the last catalog.
	Protocol   string `json:"protocol,omitempty"`
	Tools      int    `json:"tools"`
	Generation uint64 `json:"generation"`
	// Refused lists the tools refused for a model-name clash.
	Refused []string `json:"refused,omitempty"`
	// Sampling is what the server's sampling requests spent of darman's
	// model.
	Sampling SamplingUsage `json:"sampling"`
}

// Manager owns the bindings of one darman process. Its methods are safe
// for concurrent use; Close stops every server.
type Manager struct {
	opts     Options
	log      *slog.Logger
	bindings []*binding // sorted by name
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	protocols *protoCache

	mu       sync.Mutex
	closed   bool
	retiring bool
	inflight int           // tool calls running
	idle     chan struct{} // closed and replaced when inflight drops to 0
	subs     map[int]func(Status)
	nextSub  int
	resumed  map[string]bool     // sessions whose identities are recorded
	refused  map[string][]string // cross-server clashes by server, from the last Tools
}

// spawn runs f on a goroutine the manager waits for in Close; after Close
// it does nothing.
func (m *Manager) spawn(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
}

// New makes a Manager for the given servers; nothing starts until Start
// or Tools. A definition that cannot work is a binding failed with
// FailureInvalidConfig, so one typo does not hide the other servers.
func New(defs []Definition, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	m := &Manager{opts: opts, log: opts.Logger, refused: map[string][]string{}, protocols: openProtoCache(opts.ProtocolCache)}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, d := range defs {
		m.bindings = append(m.bindings, newBinding(m, d))
	}
	sort.Slice(m.bindings, func(i, j int) bool { return m.bindings[i].def.Name < m.bindings[j].def.Name })
	return m
}

func (m *Manager) now() time.Time {
	if m.opts.Now != nil {
		return m.opts.Now()
	}
	return time.Now()
}

// Start begins connecting every enabled server, concurrently, and returns
// at once.
func (m *Manager) Start() {
	for _, b := range m.bindings {
		if b.state == StateDisabled {
			continue
		}
		m.spawn(func() { b.ensure(m.ctx) })
	}
}

// Wait starts what is not started yet and blocks until every enabled
// server is ready or failed (or ctx is done). The error is a *StartupError
// listing every failure, required or optional, or ctx's error.
func (m *Manager) Wait(ctx context.Context) error {
	var (
		mu  sync.Mutex
		se  StartupError
		wg  sync.WaitGroup
		cer error
	)
	for _, b := range m.bindings {
		if b.def.Disabled {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.ensure(ctx)
			mu.Lock()
			defer mu.Unlock()
			if f, ok := err.(*Failure); ok {
				se.Failures = append(se.Failures, *f)
			} else if err != nil {
				cer = err
			}
		}()
	}
	wg.Wait()
	if cer != nil {
		return cer
	}
	if len(se.Failures) > 0 {
		sort.Slice(se.Failures, func(i, j int) bool { return se.Failures[i].Server < se.Failures[j].Server })
		return &se
	}
	return nil
}

// Tools is ToolsFor with no particular audience: the tools of the
// workspace bindings visible to everyone; it implements tool.Source.
func (m *Manager) Tools(ctx context.Context) ([]tool.Tool, error) {
	return m.ToolsFor(ctx, Audience{})
}

// Audience says who asks for tools: the session, the agent running it
// (darman's are "main" for a session's own turns and "task" for the
// sub-agents its task tool starts) and, for a sub-agent, the session it
// works for. A session's own bindings (Definition.Session) are visible
// only to it and its sub-agents; a workspace binding with
// Definition.Visible only to the sessions and agents it names (path.Match
// patterns).
type Audience struct {
	Session string
	Agent   string
	// Parent is the session a sub-agent's session works for; "" for a
	// top-level session.
	Parent string
}

func (a Audience) sees(d Definition) bool {
	if d.Session != "" {
		return d.Session == a.Session || a.Parent != "" && d.Session == a.Parent
	}
	if len(d.Visible) == 0 {
		return true
	}
	for _, p := range d.Visible {
		for _, name := range []string{a.Session, a.Agent} {
			if ok, _ := path.Match(p, name); ok && name != "" {
				return true
			}
		}
	}
	return false
}

// Source is the tool.Source of one audience, for a front that asks for
// the tools at every turn.
func (m *Manager) Source(a Audience) tool.Source { return audienceSource{m, a} }

type audienceSource struct {
	m *Manager
	a Audience
}

func (s audienceSource) Tools(ctx context.Context) ([]tool.Tool, error) {
	return s.m.ToolsFor(ctx, s.a)
}

// ToolsFor returns the tools that a's next turn may use, from the servers
// that can serve now. It waits for required servers, and
// fails with a *StartupError naming each required server that is not
// ready. Optional servers that are still starting or failed are left out
// (a failed one is retried in the background once its backoff passes); a
// crashed server keeps its tools, and calling one restarts it.
//
// A tool whose model name another server's tool already holds is refused
// (see DuplicateNameError and Status.Refused); servers are taken in name
// order, so the first holds the name.
//
// A retiring manager offers no tools: new turns get them from its
// successor.
func (m *Manager) ToolsFor(ctx context.Context, a Audience) ([]tool.Tool, error) {
	var (
		out     []tool.Tool
		se      StartupError
		holders = map[string]*mcpTool{}
		refused = map[string][]string{}
	)
	if m.isRetiring() {
		return nil, nil
	}
	for _, b := range m.bindings {
		if b.def.Disabled || !a.sees(b.def) {
			continue
		}
		var cat *catalog
		if b.def.Required {
			c, err := b.ensure(ctx)
			if err != nil {
				if f, ok := err.(*Failure); ok {
					se.Failures = append(se.Failures, *f)
					continue
				}
				return nil, err
			}
			cat = c
		} else {
			b.mu.Lock()
			cat = b.cat
			retry := b.cat == nil && b.starting == nil && b.state != StateReady &&
				(b.failure == nil || b.failure.Class != FailureInvalidConfig) && !m.now().Before(b.nextTry)
			b.mu.Unlock()
			if retry {
				m.spawn(func() { b.ensure(m.ctx) })
			}
		}
		if cat == nil {
			continue
		}
		for _, t := range cat.tools {
			if other, taken := holders[t.name]; taken {
				e := &DuplicateNameError{ModelName: t.name, Server: b.def.Name, Tool: t.raw.Name, OtherServer: other.b.def.Name, OtherTool: other.raw.Name}
				refused[b.def.Name] = append(refused[b.def.Name], e.Error())
				continue
			}
			holders[t.name] = t
			out = append(out, t)
		}
	}
	m.mu.Lock()
	m.refused = refused
	m.mu.Unlock()
	if len(se.Failures) > 0 {
		return nil, &se
	}
	return out, nil
}

// Status reports every binding, in name order.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	refused := m.refused
	m.mu.Unlock()
	out := make([]Status, 0, len(m.bindings))
	for _, b := range m.bindings {
		s := b.status()
		s.Refused = append(s.Refused, refused[b.def.Name]...)
		out = append(out, s)
	}
	return out
}

// Subscribe calls f with a binding's status after each change: starting,
// ready, failed or crashed, a new catalog generation, retiring. f is
// called on the manager's goroutines, one change at a time per binding,
// and must not block. The returned function stops the calls.
func (m *Manager) Subscribe(f func(Status)) (stop func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.subs == nil {
		m.subs = map[int]func(Status){}
	}
	id := m.nextSub
	m.nextSub++
	m.subs[id] = f
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.subs, id)
	}
}

// changed tells the subscribers b's status.
func (m *Manager) changed(b *binding) {
	m.mu.Lock()
	subs := make([]func(Status), 0, len(m.subs))
	for _, f := range m.subs {
		subs = append(subs, f)
	}
	m.mu.Unlock()
	if len(subs) == 0 {
		return
	}
	st := b.status()
	for _, f := range subs {
		f(st)
	}
}

func (m *Manager) isRetiring() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.retiring
}

// callStarted and callDone count the tool calls running, for Retire.
func (m *Manager) callStarted() {
	m.mu.Lock()
	m.inflight++
	m.mu.Unlock()
}

func (m *Manager) callDone() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight--
	if m.inflight == 0 && m.idle != nil {
		close(m.idle)
		m.idle = nil
	}
}

// Retire takes the manager out of new turns (ToolsFor offers nothing and
// Status says retiring) while the calls of turns that still hold its tools
// finish; then, or when ctx ends, it closes the manager. A front that
// replaces its agent (new settings) retires the old manager so no call is
// cut off.
func (m *Manager) Retire(ctx context.Context) {
	m.mu.Lock()
	m.retiring = true
	m.mu.Unlock()
	for _, b := range m.bindings {
		m.changed(b)
	}
	for {
		m.mu.Lock()
		if m.inflight == 0 {
			m.mu.Unlock()
			break
		}
		if m.idle == nil {
			m.idle = make(chan struct{})
		}
		idle := m.idle
		m.mu.Unlock()
		select {
		case <-idle:
			continue
		case <-ctx.Done():
		}
		break
	}
	m.Close()
}

// Close stops every server and waits for the work the manager started.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
	var wg sync.WaitGroup
	for _, b := range m.bindings {
		b.mu.Lock()
		c := b.conn
		b.conn = nil
		if b.state == StateReady {
			b.state = StateConfigured
		}
		b.mu.Unlock()
		if c != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.close()
			}()
		}
	}
	wg.Wait()
}

// watch notices when c ends without darman closing it.
func (m *Manager) watch(b *binding, c *conn) {
	m.spawn(func() {
		select {
		case <-c.dead:
			if !c.closing.Load() {
				b.lost(c)
			}
		case <-m.ctx.Done():
		}
	})
}

func (m *Manager) goRefresh(b *binding, c *conn) {
	m.spawn(func() {
		select {
		case <-c.adopted:
		case <-c.stopped:
			return
		case <-m.ctx.Done():
			return
		}
		ctx, cancel := context.WithTimeout(m.ctx, b.def.startupTimeout())
		defer cancel()
		b.refreshCatalog(ctx, c)
	})
}

// sessionDrift records the identities of a session's first MCP call and
// returns, once, a note for the model on what changed since the session
// last ran; "" when nothing did or sessions are not recorded.
func (m *Manager) sessionDrift(session string) string {
	if m.opts.Sessions.Dir == "" || session == "" {
		return ""
	}
	m.mu.Lock()
	if m.resumed == nil {
		m.resumed = map[string]bool{}
	}
	done := m.resumed[session]
	m.resumed[session] = true
	m.mu.Unlock()
	if done {
		return ""
	}
	drift, err := m.Resume(m.opts.Sessions, session)
	if err != nil {
		m.log.Warn("mcp: recording the session's servers failed", "session", session, "error", err.Error())
		return ""
	}
	if len(drift) == 0 {
		return ""
	}
	if m.opts.OnDrift != nil {
		m.opts.OnDrift(session, drift)
	}
	return "Note: the MCP servers changed since this session last ran: " + strings.Join(drift, "; ") + "."
}
