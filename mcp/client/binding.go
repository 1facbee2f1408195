package client

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/agent"
)

// State is where a binding is in its life.
type State string

// The states.
const (
	StateConfigured State = "configured"
	StateStarting   State = "starting"
	StateReady      State = "ready"
	StateFailed     State = "failed"
	StateDisabled   State = "disabled"
	// StateRetiring: the manager is being replaced; the binding serves
	// the calls of turns that still hold its tools, then stops.
	StateRetiring State = "retiring"
)

// legacyVersion is what darman asks for when it skips the server/discover
// probe: the newest version that still uses initialize.
const legacyVersion = "2025-11-25"

// discoverVersion is the first version with server/discover.
const discoverVersion = "2026-07-28"

// catalog is one generation of a binding's tools, tied to the connection
// it was listed on. A call holds its catalog, so a newer generation never
// pulls a connection out from under it.
type catalog struct {
	gen      uint64
	conn     *conn
	protocol string
	server   string // "name version" as the server said at initialize
	digest   string // of every tool offered, before the filter
	tools    []*mcpTool
	refused  []*DuplicateNameError
}

// binding owns one server's connection and catalog. Its mutable state is
// guarded by mu; start attempts are serialized through starting.
type binding struct {
	def     Definition
	m       *Manager
	log     *slog.Logger
	secrets []string

	mu       sync.Mutex
	state    State
	failure  *Failure
	conn     *conn
	cat      *catalog
	gen      uint64
	starting chan struct{}
	attempts int
	nextTry  time.Time
	legacy   bool // the server does not speak server/discover: skip the probe
	refresh  uint64
	progress map[string]func(string)
	token    uint64
	sampled  SamplingUsage
	// charging are the calls in flight that carry their session's Charge
	// or Elicit, by a key of their own (see charger, elicitor).
	charges map[uint64]callCharge
	// pauses stop the timeouts of the calls in flight, by the same keys
	// (see pauseCalls).
	pauses   map[uint64]func() (resume func())
	nextCall uint64
}

// callCharge is one call in flight: its session, how to charge it and
// how to ask its user (nil when the call has no way of its own).
type callCharge struct {
	session string
	charge  func(agent.Usage, float64)
	elicit  elicitFunc
}

func newBinding(m *Manager, d Definition) *binding {
	b := &binding{def: d, m: m, state: StateConfigured, secrets: d.secrets(), progress: map[string]func(string){},
		charges: map[uint64]callCharge{}, pauses: map[uint64]func() func(){}}
	b.log = m.log.With("mcp_server", d.Name)
	if d.Disabled {
		b.state = StateDisabled
		return b
	}
	b.legacy = m.protocols.legacy(d)
	if err := d.validate(m.opts.Sampler != nil); err != nil {
		b.state = StateFailed
		b.failure = b.fail(FailureInvalidConfig, err.Error())
	}
	return b
}

func (b *binding) fail(class FailureClass, msg string) *Failure {
	return &Failure{Server: b.def.Name, Required: b.def.Required, Class: class, Message: scrub(msg, b.secrets)}
}

// backoff is the wait after the n-th failed attempt in a row.
func backoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := 500 * time.Millisecond << min(n-1, 6)
	return min(d, 30*time.Second)
}

// ensure returns a ready catalog, starting (or restarting) the server when
// it has none and its backoff has passed. Concurrent callers share one
// attempt. The attempt runs on the manager's lifetime, not ctx: a caller
// that gives up does not abort a start others may wait for.
func (b *binding) ensure(ctx context.Context) (*catalog, error) {
	for {
		b.mu.Lock()
		switch {
		case b.state == StateDisabled:
			b.mu.Unlock()
			return nil, fmt.Errorf("mcp server %s is disabled", b.def.Name)
		case b.state == StateReady && b.conn != nil && !b.conn.isDead():
			cat := b.cat
			b.mu.Unlock()
			return cat, nil
		case b.starting != nil:
			ch := b.starting
			b.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case b.failure != nil && b.failure.Class == FailureInvalidConfig:
			f := b.failure
			b.mu.Unlock()
			return nil, f
		case b.failure != nil && b.m.now().Before(b.nextTry):
			f := *b.failure
			f.Message += fmt.Sprintf(" (next attempt in %s)", b.nextTry.Sub(b.m.now()).Round(100*time.Millisecond))
			b.mu.Unlock()
			return nil, &f
		}
		ch := make(chan struct{})
		b.starting = ch
		b.state = StateStarting
		b.mu.Unlock()
		b.m.changed(b)

		cat, f := b.connect()

		b.mu.Lock()
		b.starting = nil
		if f != nil {
			b.state, b.failure = StateFailed, f
			b.attempts++
			b.nextTry = b.m.now().Add(backoff(b.attempts))
		} else {
			b.state, b.failure, b.conn, b.cat = StateReady, nil, cat.conn, cat
		}
		b.mu.Unlock()
		if f == nil {
			cat.conn.adopt()
		}
		close(ch)
		b.m.changed(b)
		if f != nil {
			b.log.Warn("mcp server failed", "class", string(f.Class), "error", f.Message)
			return nil, f
		}
		b.log.Info("mcp server ready", "protocol", cat.protocol, "tools", len(cat.tools))
		b.m.watch(b, cat.conn)
		return cat, nil
	}
}

// connect makes one start attempt: spawn or dial, handshake, list tools.
func (b *binding) connect() (*catalog, *Failure) {
	ctx, cancel := context.WithTimeout(b.m.ctx, b.def.startupTimeout())
	defer cancel()
	b.mu.Lock()
	legacy := b.legacy
	b.mu.Unlock()
	cat, f := b.attempt(ctx, legacy)
	if f != nil && f.Class == FailureExited && !legacy {
		// go-sdk #1177: some stdio servers exit when they see the
		// server/discover probe. Try once more, straight to initialize.
		b.log.Debug("mcp server exited on the discover probe; retrying with initialize")
		if cat2, f2 := b.attempt(ctx, true); f2 == nil {
			b.mu.Lock()
			b.legacy = true
			b.mu.Unlock()
			return cat2, nil
		}
	}
	return cat, f
}

func (b *binding) attempt(ctx context.Context, legacy bool) (*catalog, *Failure) {
	var (
		c  *conn
		tr mcp.Transport
	)
	if b.def.URL != "" {
		c, tr = remote(b.def)
	} else {
		var f *Failure
		c, tr, f = spawn(b.def, b.m.opts.Children, b.log)
		if f != nil {
			return nil, b.fail(f.Class, f.Message)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "darman", Version: b.m.opts.Version}, b.clientOptions(c))
	var so *mcp.ClientSessionOptions
	if legacy {
		so = &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion}
	}
	cs, err := client.Connect(ctx, tr, so)
	if err != nil {
		if c.proc != nil {
			// A server that died closes its stdout a moment before it is
			// reaped; give the reaper that moment so the class is right.
			select {
			case <-c.exited:
			case <-time.After(300 * time.Millisecond):
			}
		}
		class := classify(ctx, c, err)
		c.close()
		msg := err.Error()
		b.log.Debug("mcp connect failed", "error", scrub(msg, b.secrets))
		switch class {
		case FailureHandshakeTimeout:
			msg = fmt.Sprintf("no answer to the handshake within %s", b.def.startupTimeout())
		case FailureExited:
			msg = "the server exited (" + c.exitStatus() + ")"
		}
		if tail := c.stderr.Tail(); tail != "" {
			msg += "; stderr: " + tail
		}
		return nil, b.fail(class, msg)
	}
	c.cs = cs
	go func() {
		cs.Wait()
		close(c.dead)
	}()
	cat, err := b.list(ctx, c)
	if err != nil {
		class := classify(ctx, c, err)
		c.close()
		return nil, b.fail(class, "listing tools: "+err.Error())
	}
	if cat.protocol < discoverVersion {
		b.mu.Lock()
		b.legacy = true
		b.mu.Unlock()
	}
	b.m.protocols.remember(b.def, cat.protocol)
	return cat, nil
}

func (b *binding) clientOptions(c *conn) *mcp.ClientOptions {
	opts := &mcp.ClientOptions{
		// No roots: darman does not serve them.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			// Notifications are handled one at a time: list off this
			// goroutine.
			b.m.goRefresh(b, c)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			b.onProgress(req.Params)
		},
	}
	if b.def.SamplingMaxTokens > 0 && b.m.opts.Sampler != nil {
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			ctx, cancel := c.bound(ctx, b.m.ctx)
			defer cancel()
			return b.sample(ctx, req)
		}
	}
	if b.m.opts.Gate != nil {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			ctx, cancel := c.bound(ctx, b.m.ctx)
			defer cancel()
			return b.elicit(ctx, req)
		}
		opts.Capabilities.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	}
	return opts
}

// list builds a new catalog generation from the server's tools.
func (b *binding) list(ctx context.Context, c *conn) (*catalog, error) {
	cat := &catalog{conn: c}
	if r := c.cs.InitializeResult(); r != nil {
		cat.protocol = r.ProtocolVersion
		if r.ServerInfo != nil {
			cat.server = strings.TrimSpace(r.ServerInfo.Name + " " + r.ServerInfo.Version)
		}
	}
	holders := map[string]string{}
	var offered []any
	defer func() { cat.digest = digest(offered) }()
	for t, err := range c.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		offered = append(offered, []any{t.Name, t.Title, t.Description, schemaDigest(t.InputSchema), schemaDigest(t.OutputSchema), t.Annotations})
		if !b.exposed(t.Name) {
			continue
		}
		name := ModelName(b.def.Name, t.Name)
		if other, taken := holders[name]; taken {
			cat.refused = append(cat.refused, &DuplicateNameError{ModelName: name, Server: b.def.Name, Tool: t.Name, OtherServer: b.def.Name, OtherTool: other})
			continue
		}
		holders[name] = t.Name
		cat.tools = append(cat.tools, newTool(b, cat, t, name))
	}
	b.mu.Lock()
	b.gen++
	cat.gen = b.gen
	b.mu.Unlock()
	return cat, nil
}

func (b *binding) exposed(name string) bool {
	match := func(patterns []string) bool {
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
	if len(b.def.Allow) > 0 && !match(b.def.Allow) {
		return false
	}
	return !match(b.def.Deny)
}

// refreshCatalog adopts a new generation after tools/list_changed, unless
// the connection was replaced or a later refresh started meanwhile.
func (b *binding) refreshCatalog(ctx context.Context, c *conn) {
	b.mu.Lock()
	b.refresh++
	seq := b.refresh
	b.mu.Unlock()
	cat, err := b.list(ctx, c)
	if err != nil {
		b.log.Warn("mcp server: refreshing the tool list failed", "error", scrub(err.Error(), b.secrets))
		return
	}
	b.mu.Lock()
	if b.conn != c || b.refresh != seq {
		b.mu.Unlock()
		return
	}
	b.cat = cat
	b.mu.Unlock()
	b.log.Info("mcp server: new tool catalog", "generation", cat.gen, "tools", len(cat.tools))
	b.m.changed(b)
}

// lost records that c ended without darman asking: the server crashed.
// Its catalog stays, so the model still sees the tools and the next call
// restarts the server.
func (b *binding) lost(c *conn) {
	status := c.exitStatus()
	tail := c.stderr.Tail()
	b.mu.Lock()
	if b.conn == c {
		b.conn = nil
		msg := "the connection ended"
		if status != "" {
			msg = "the server exited (" + status + ")"
		}
		if tail != "" {
			msg += "; stderr: " + tail
		}
		b.state, b.failure = StateFailed, b.fail(FailureCrashed, msg)
		if time.Since(c.started) > time.Minute {
			b.attempts = 0
		}
		b.nextTry = b.m.now().Add(backoff(b.attempts))
		b.log.Warn("mcp server crashed; it restarts on next use", "error", b.failure.Message)
		b.mu.Unlock()
		b.m.changed(b)
	} else {
		b.mu.Unlock()
	}
	c.close()
}

func (b *binding) onProgress(p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	b.mu.Lock()
	f := b.progress[fmt.Sprint(p.ProgressToken)]
	b.mu.Unlock()
	if f == nil {
		return
	}
	text := fmt.Sprintf("%g", p.Progress)
	if p.Total > 0 {
		text += fmt.Sprintf("/%g", p.Total)
	}
	if p.Message != "" {
		text += " " + p.Message
	}
	f(scrub(text, nil))
}

// watchProgress routes a call's progress notifications to f until the
// returned function is called.
func (b *binding) watchProgress(f func(string)) (token string, done func()) {
	b.mu.Lock()
	b.token++
	token = fmt.Sprintf("darman-%d", b.token)
	if f != nil {
		b.progress[token] = f
	}
	b.mu.Unlock()
	return token, func() {
		b.mu.Lock()
		delete(b.progress, token)
		b.mu.Unlock()
	}
}

func (b *binding) status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Status{
		Name:       b.def.Name,
		Origin:     b.def.RedactedOrigin(),
		ConfigFile: b.def.ConfigFile,
		Transport:  b.def.Transport(),
		Required:   b.def.Required,
		Visible:    b.def.Visible,
		State:      b.state,
		Sampling:   b.sampled,
	}
	if b.m.isRetiring() && s.State != StateDisabled {
		s.State = StateRetiring
	}
	if b.failure != nil && b.state == StateFailed {
		f := *b.failure
		s.Failure = &f
	}
	if b.cat != nil {
		s.Protocol = b.cat.protocol
		s.Tools = len(b.cat.tools)
		s.Generation = b.cat.gen
		for _, r := range b.cat.refused {
			s.Refused = append(s.Refused, r.Error())
		}
	}
	return s
}

// sample serves a server's sampling request under its token cap.
func (b *binding) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	p := req.Params
	if p == nil || len(p.Messages) == 0 {
		return nil, fmt.Errorf("sampling request has no messages")
	}
	sr := SampleRequest{Server: b.def.Name, System: p.SystemPrompt, MaxTokens: b.def.SamplingMaxTokens}
	if p.MaxTokens > 0 && int(p.MaxTokens) < sr.MaxTokens {
		sr.MaxTokens = int(p.MaxTokens)
	}
	for _, m := range p.Messages {
		var text strings.Builder
		if t, ok := m.Content.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
		} else {
			return nil, fmt.Errorf("sampling: only text messages are supported")
		}
		sr.Messages = append(sr.Messages, SampleMessage{Role: string(m.Role), Text: text.String()})
	}
	res, err := b.m.opts.Sampler.Sample(ctx, sr)
	if err != nil {
		return nil, fmt.Errorf("sampling for %s: %w", b.def.Name, err)
	}
	if res.Model == "" {
		return nil, fmt.Errorf("sampling for %s: the sampler named no model", b.def.Name)
	}
	b.mu.Lock()
	b.sampled.Requests++
	b.sampled.InputTokens += res.InputTokens
	b.sampled.OutputTokens += res.OutputTokens
	b.mu.Unlock()
	b.log.Info("mcp server sampled the model", "model", res.Model, "input_tokens", res.InputTokens, "output_tokens", res.OutputTokens)
	if charge := b.charger(ctx); charge != nil {
		charge(agent.Usage{Input: int64(res.InputTokens), Output: int64(res.OutputTokens)}, res.Cost)
	}
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: res.Text}, Model: res.Model, Role: "assistant", StopReason: res.StopReason}, nil
}

// charging records a call in flight that carries its session's charge
// or elicitor, until the returned function is called.
func (b *binding) charging(c callCharge) (done func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextCall++
	key := b.nextCall
	b.charges[key] = c
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.charges, key)
	}
}

// pausing records a call in flight whose timeout pause stops, until the
// returned function is called.
func (b *binding) pausing(pause func() (resume func())) (done func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextCall++
	key := b.nextCall
	b.pauses[key] = pause
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.pauses, key)
	}
}

// pauseCalls stops the timeouts of the calls an elicitation may be for
// while a person answers it: the call whose context it came in
// (multi-round-trip), else every call in flight on the server, since a
// server on an older protocol asks over its connection, unrelated to any
// call.
func (b *binding) pauseCalls(ctx context.Context) (resume func()) {
	if pause, ok := ctx.Value(pauseKey{}).(func() func()); ok {
		return pause()
	}
	b.mu.Lock()
	var resumes []func()
	for _, pause := range b.pauses {
		resumes = append(resumes, pause())
	}
	b.mu.Unlock()
	return func() {
		for _, r := range resumes {
			r()
		}
	}
}

// charger finds the session a sampling request is made for. A request
// made within a tool call (multi-round-trip) carries the call's charge in
// its context. A server on an older protocol asks over its connection,
// unrelated to any call: it is charged to the session whose calls are in
// flight on the server, when there is exactly one such session, and to
// none (only to the server, Status.Sampling) when several are.
func (b *binding) charger(ctx context.Context) func(agent.Usage, float64) {
	if charge, ok := ctx.Value(chargeKey{}).(func(agent.Usage, float64)); ok {
		return charge
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	found, ok := b.oneSessionLocked()
	if !ok {
		b.log.Debug("a sampling request while calls of several sessions (or none) were in flight is charged to the server only")
		return nil
	}
	return found.charge
}

// oneSessionLocked is a call in flight on the server when every call in
// flight is of one session; ok is false when none is or several
// sessions' are. b.mu must be held.
func (b *binding) oneSessionLocked() (found callCharge, ok bool) {
	for _, c := range b.charges {
		if ok && found.session != c.session {
			return callCharge{}, false
		}
		found, ok = c, true
	}
	return found, ok
}
