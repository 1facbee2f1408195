//go:build unix

package child

import (
	"sort"
	"sync"
	"time"
)

// Registry knows every child process group darman has running, whoever
// started it. Its methods are safe for concurrent use. The composition root
// makes one and closes it last, so nothing started by a tool, a language
// server pool or an MCP binding survives darman's exit.
type Registry struct {
	mu     sync.Mutex
	groups map[int]string
	closed bool
}

// Child is a running process group the registry knows.
type Child struct {
	PGID int
	Name string
}

// Add records the group pgid, described by name ("bash: go test ./...",
// "gopls"), and returns the function that forgets it once its owner has
// stopped it. After Close, Add stops the group at once.
func (r *Registry) Add(pgid int, name string) (remove func()) {
	if r == nil {
		return func() {}
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		StopGroup(pgid, nil, 0)
		return func() {}
	}
	if r.groups == nil {
		r.groups = map[int]string{}
	}
	r.groups[pgid] = name
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.groups, pgid)
		r.mu.Unlock()
	}
}

// Live lists the groups still recorded, in PGID order.
func (r *Registry) Live() []Child {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Child, 0, len(r.groups))
	for pgid, name := range r.groups {
		out = append(out, Child{pgid, name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PGID < out[j].PGID })
	return out
}

// Close stops every group still recorded — SIGTERM, up to grace for all of
// them to exit, then SIGKILL — and makes later Adds stop their group at
// once.
func (r *Registry) Close(grace time.Duration) {
	r.mu.Lock()
	r.closed = true
	groups := r.groups
	r.groups = nil
	r.mu.Unlock()
	var wg sync.WaitGroup
	for pgid := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			StopGroup(pgid, nil, grace)
		}()
	}
	wg.Wait()
}
