package prompt

import (
	"container/list"
	"context"
	"sync"
)

// DefaultMemoSessions is how many sessions' prompts a Memo keeps when
// NewMemo is given no bound.
const DefaultMemoSessions = 256

// Memo keeps the system prompt each session was first given, so that the
// prompt — and with it the provider's prompt cache — stays the same from
// one step and turn of the session to the next, though Build's facts (the
// date, git status) change. It keeps the sessions used most recently, up
// to a bound: a long-running server sees sessions without end, and a
// prompt can be hundreds of KiB of instruction files. A session that
// falls out has its prompt built again when it next runs. A Memo is safe
// for concurrent use.
type Memo struct {
	build func(ctx context.Context, session, model string, tools []string) (string, error)
	max   int

	mu      sync.Mutex
	order   *list.List // of *memoEntry, most recently used first
	entries map[string]*list.Element
}

type memoEntry struct {
	session, text string
}

// NewMemo returns a memo over build, which makes a session's prompt,
// keeping up to max sessions (DefaultMemoSessions when max <= 0).
func NewMemo(max int, build func(ctx context.Context, session, model string, tools []string) (string, error)) *Memo {
	if max <= 0 {
		max = DefaultMemoSessions
	}
	return &Memo{build: build, max: max, order: list.New(), entries: map[string]*list.Element{}}
}

// Prompt returns session's prompt: the one kept, else a new one from
// build, which is kept unless build failed. Two calls for a session
// without a prompt yet may both build; the first kept is what both return.
func (m *Memo) Prompt(ctx context.Context, session, model string, tools []string) (string, error) {
	if text, ok := m.get(session); ok {
		return text, nil
	}
	text, err := m.build(ctx, session, model, tools)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[session]; ok {
		m.order.MoveToFront(e)
		return e.Value.(*memoEntry).text, nil
	}
	m.entries[session] = m.order.PushFront(&memoEntry{session, text})
	for m.order.Len() > m.max {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.entries, last.Value.(*memoEntry).session)
	}
	return text, nil
}

func (m *Memo) get(session string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[session]
	if !ok {
		return "", false
	}
	m.order.MoveToFront(e)
	return e.Value.(*memoEntry).text, true
}

// Len is how many sessions' prompts are kept.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}
