package child

import (
	"sort"
	"sync"
	"time"
)

// Registry knows every child process group darman has running, whoever
// started it. Its methods are safe for concurrent use; the zero value is
// ready. The composition root makes one and closes it last, so nothing
// started by a tool, a language server pool or an MCP binding survives
// darman's exit.
type Registry struct {
	mu     sync.Mutex
	groups map[int]entry
	closed bool
}

type entry struct {
	g    group
	name string
}

// Child is a running process group the registry knows.
type Child struct {
	// PGID is the group's ID (on Unix, its leader's PID).
	PGID int
	Name string
}

// add records the group g, described by name, and returns the function
// that forgets it once its owner has stopped it. After Close, add stops
// the group at once. A nil registry records nothing.
func (r *Registry) add(g group, name string) (forget func()) {
	if r == nil {
		return func() {}
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		g.stop(nil, 0)
		return func() {}
	}
	if r.groups == nil {
		r.groups = map[int]entry{}
	}
	r.groups[g.id()] = entry{g, name}
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			delete(r.groups, g.id())
			r.mu.Unlock()
		})
	}
}

// Live lists the groups still recorded, in PGID order.
func (r *Registry) Live() []Child {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Child, 0, len(r.groups))
	for id, e := range r.groups {
		out = append(out, Child{id, e.name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PGID < out[j].PGID })
	return out
}

// Close stops every group still recorded — SIGTERM, up to grace for all of
// them to exit, then SIGKILL — and makes later starts stop their group at
// once.
func (r *Registry) Close(grace time.Duration) {
	r.mu.Lock()
	r.closed = true
	groups := r.groups
	r.groups = nil
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.g.stop(nil, grace)
		}()
	}
	wg.Wait()
}
