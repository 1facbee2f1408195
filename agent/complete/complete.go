// Package complete is darman's inline completion engine: for a cursor in
// an editor buffer it assembles the context (the windows around the
// cursor, snippets of the other buffers most like the cursor's
// neighbourhood, the definitions of the identifiers around it from the
// workspace's language server), asks the completion model through a
// fill-in-the-middle API or a chat model, and tidies the answer. It keeps
// the cost down: a debounce, a per-document prefix cache (typing through a
// suggestion asks nothing), superseded requests cancelled with their HTTP
// request, a cap on concurrent model requests, and usage counted per
// workspace. The LSP front (server/lsp/complete.go) speaks it as
// textDocument/inlineCompletion and textDocument/completion.
package complete

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of the options.
const (
	// DefaultDebounce is the pause after an automatic trigger before the
	// model is asked. Measured on a typing trace of fast bursts (keys
	// 60-180 ms apart, BenchmarkDebounce in docs/benchmarks.md), 150 ms
	// sends a third of the model calls of 75 ms (32.5 against 90 per 100
	// keys) for 75 ms more before the suggestion shows; 250 ms saves
	// little more (12.5) for another 100 ms.
	DefaultDebounce      = 150 * time.Millisecond
	DefaultMaxTokens     = 128
	DefaultMaxConcurrent = 2
	DefaultPrefixTokens  = 1500
	DefaultSuffixTokens  = 500
	DefaultBufferTokens  = 400
	DefaultDefTokens     = 400
	DefaultLSPBudget     = 150 * time.Millisecond
)

// DefaultTemperature is the sampling temperature when none is set.
var DefaultTemperature = 0.1

// Options configure an Engine.
type Options struct {
	// Model answers the completions. Required.
	Model Model
	// Root is the workspace root: exclude patterns and the paths shown to
	// the model are relative to it.
	Root string
	// Debounce is the pause before an automatic request asks the model;
	// zero means DefaultDebounce, negative none.
	Debounce    time.Duration
	MaxTokens   int
	Temperature *float64
	Stop        []string
	// Languages switch completions by LSP language id; "*" sets the
	// others. Nil means every language.
	Languages map[string]bool
	// Exclude are .gitignore-style patterns added to DefaultExclude.
	Exclude []string
	// MaxConcurrent caps the model requests in flight; zero means
	// DefaultMaxConcurrent.
	MaxConcurrent int
	// SkipCommentsStrings asks nothing on automatic triggers while the
	// cursor is in a line comment or a string.
	SkipCommentsStrings bool
	// Token budgets; zero means the defaults.
	PrefixTokens, SuffixTokens, BufferTokens, DefinitionTokens int
	// NoBuffers and NoDefinitions switch those context sources off.
	NoBuffers, NoDefinitions bool
	// LSPBudget is how long a completion waits for the language server's
	// definitions; zero means DefaultLSPBudget.
	LSPBudget time.Duration
	// Buffers lists the editor's open buffers; nil means none.
	Buffers func() []Buffer
	// ReadFile reads a file that is not open (a definition's); nil means
	// os.ReadFile.
	ReadFile func(path string) ([]byte, error)
	Logger   *slog.Logger
}

// Buffer is an editor buffer.
type Buffer struct {
	URI string
	// Path is the file's absolute path; "" when it is not a file.
	Path     string
	Language string
	Version  int32
	Text     string
}

// Request is one completion at a cursor.
type Request struct {
	// URI names the document: requests for the same URI supersede each
	// other.
	URI      string
	Path     string
	Language string
	// Text is the document's content and Offset the cursor in it, in
	// bytes.
	Text   string
	Offset int
	// Invoked is set when the user asked (LSP triggerKind 1): no
	// debounce, no skipping in comments.
	Invoked bool
	// Selected is the completion item the editor's popup has selected
	// (LSP selectedCompletionInfo): the suggestion must extend it.
	Selected *Selected
}

// Selected is the editor's selected completion item: it would replace
// Start..End (byte offsets) with Text.
type Selected struct {
	Start, End int
	Text       string
}

// Result is a suggestion: replace Start..End of the request's text with
// Text. Text is "" when there is none, and Reason says why.
type Result struct {
	Text       string
	Start, End int
	// Source is "model" or "cache".
	Source string
	Reason string
}

// The reasons a request gets no suggestion.
const (
	ReasonExcluded   = "excluded"
	ReasonLanguage   = "language off"
	ReasonSuperseded = "superseded"
	ReasonChanged    = "document changed"
	ReasonComment    = "in a comment or string"
	ReasonEmpty      = "empty answer"
)

var (
	errSuperseded = errors.New("a newer completion request for the document replaced this one")
	errChanged    = errors.New("the document changed while the completion was asked")
)

// Engine answers completions for one workspace. Safe for concurrent use.
type Engine struct {
	o       Options
	exclude *excluder
	sem     chan struct{}
	log     *slog.Logger

	mu       sync.Mutex
	flights  map[string]*flight
	caches   map[string]*docCache
	excluded map[string]bool // by path, memoized
	indexes  map[string]*bufIndex
	edited   map[string]time.Time
	recent   []recentBuffer // closed buffers edited lately, oldest first
	near     nearestMemo
	definer  Definer
	defs     defCache
	stats    Stats
}

// flight is a request in progress for a document.
type flight struct {
	cancel context.CancelCauseFunc
}

// New returns an engine.
func New(o Options) (*Engine, error) {
	if o.Model == nil {
		return nil, errors.New("complete.New: Options.Model is required")
	}
	if o.Debounce == 0 {
		o.Debounce = DefaultDebounce
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.Temperature == nil {
		o.Temperature = &DefaultTemperature
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.PrefixTokens <= 0 {
		o.PrefixTokens = DefaultPrefixTokens
	}
	if o.SuffixTokens <= 0 {
		o.SuffixTokens = DefaultSuffixTokens
	}
	if o.BufferTokens <= 0 {
		o.BufferTokens = DefaultBufferTokens
	}
	if o.DefinitionTokens <= 0 {
		o.DefinitionTokens = DefaultDefTokens
	}
	if o.LSPBudget <= 0 {
		o.LSPBudget = DefaultLSPBudget
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{
		o: o, exclude: newExcluder(append(append([]string(nil), DefaultExclude...), o.Exclude...)),
		sem: make(chan struct{}, o.MaxConcurrent), log: o.Logger,
		flights: map[string]*flight{}, caches: map[string]*docCache{}, excluded: map[string]bool{},
		indexes: map[string]*bufIndex{}, edited: map[string]time.Time{},
	}
	e.defs.entries = map[string]*defEntry{}
	e.stats.Model = o.Model.Info().ID
	e.stats.Wire = o.Model.Describe()
	return e, nil
}

// Describe says which model answers, and how.
func (e *Engine) Describe() string { return e.o.Model.Describe() }

// Excluded reports whether a file is never completed nor sent.
func (e *Engine) Excluded(path string) bool {
	if path == "" {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.excludedLocked(path)
}

func (e *Engine) excludedLocked(path string) bool {
	if v, ok := e.excluded[path]; ok {
		return v
	}
	rel := e.rel(path)
	v := e.exclude.match(rel)
	if len(e.excluded) > 4096 {
		clear(e.excluded)
	}
	e.excluded[path] = v
	return v
}

// rel is path relative to the root, slash-separated; a path outside the
// root keeps its absolute form without the leading slash, so that
// unanchored patterns still match its names.
func (e *Engine) rel(path string) string {
	if e.o.Root != "" {
		if r, err := filepath.Rel(e.o.Root, path); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	return strings.TrimLeft(filepath.ToSlash(path), "/")
}

// Enabled reports whether completions are on for a language.
func (e *Engine) Enabled(language string) bool {
	if e.o.Languages == nil {
		return true
	}
	if v, ok := e.o.Languages[language]; ok {
		return v
	}
	if v, ok := e.o.Languages["*"]; ok {
		return v
	}
	return true
}

// Changed tells the engine a document changed: its request in flight is
// cancelled (with its HTTP request), and it counts as recently edited.
func (e *Engine) Changed(uri string) {
	e.mu.Lock()
	e.edited[uri] = time.Now()
	f := e.flights[uri]
	e.mu.Unlock()
	if f != nil {
		f.cancel(errChanged)
	}
}

// Closed forgets a document's cache and index. last is its text as it was
// closed: a document edited in the last recentEdit stays a source of
// snippets (one of the maxRecent last ones, of at most maxRecentSize
// bytes); a zero Buffer keeps nothing.
func (e *Engine) Closed(uri string, last Buffer) {
	e.mu.Lock()
	f := e.flights[uri]
	delete(e.caches, uri)
	delete(e.indexes, uri)
	t, edited := e.edited[uri]
	delete(e.edited, uri)
	e.recent = slices.DeleteFunc(e.recent, func(b recentBuffer) bool { return b.URI == uri })
	if edited && time.Since(t) < recentEdit && last.URI == uri && len(last.Text) <= maxRecentSize {
		if len(e.recent) == maxRecent {
			e.recent = e.recent[1:]
		}
		e.recent = append(e.recent, recentBuffer{Buffer: last, at: t})
	}
	e.mu.Unlock()
	if f != nil {
		f.cancel(errChanged)
	}
}

// Complete answers a completion request. A newer request for the same
// document, or Changed, ends it early with an empty Result (Reason
// superseded or document changed) and closes its model connection. An
// error is the model's failure, or ctx's.
func (e *Engine) Complete(ctx context.Context, req Request) (Result, error) {
	if req.Offset < 0 || req.Offset > len(req.Text) {
		return Result{}, fmt.Errorf("the cursor (byte %d) is outside the document (%d bytes)", req.Offset, len(req.Text))
	}
	start, end, prefixText := req.Offset, req.Offset, req.Text[:req.Offset]
	lead := ""
	if s := req.Selected; s != nil {
		if s.Start < 0 || s.Start > req.Offset || s.End < req.Offset || s.End > len(req.Text) {
			return Result{}, fmt.Errorf("selectedCompletionInfo's range is not around the cursor")
		}
		start, end, lead = s.Start, s.End, s.Text
		prefixText = req.Text[:s.Start] + s.Text
	}
	e.count(func(s *Stats) { s.Requests++ })
	if !e.Enabled(req.Language) {
		e.count(func(s *Stats) { s.Skipped++ })
		return Result{Reason: ReasonLanguage}, nil
	}
	if e.Excluded(req.Path) {
		e.count(func(s *Stats) { s.Excluded++ })
		return Result{Reason: ReasonExcluded}, nil
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	me := &flight{cancel: cancel}
	e.mu.Lock()
	old := e.flights[req.URI]
	e.flights[req.URI] = me
	e.mu.Unlock()
	if old != nil {
		old.cancel(errSuperseded)
	}
	defer func() {
		e.mu.Lock()
		if e.flights[req.URI] == me {
			delete(e.flights, req.URI)
		}
		e.mu.Unlock()
	}()

	// The cache answers at once: typing through a suggestion. The older
	// request is ended all the same: its cursor is gone.
	if req.Selected == nil {
		e.mu.Lock()
		rest, ok := e.caches[req.URI].lookup(req.Text, req.Offset)
		e.mu.Unlock()
		if ok {
			e.count(func(s *Stats) { s.CacheHits++ })
			return Result{Text: rest, Start: start, End: end, Source: "cache"}, nil
		}
	}
	r, err := e.ask(ctx, req, prefixText, start, end, lead)
	if err != nil {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errSuperseded):
			e.count(func(s *Stats) { s.Superseded++ })
			return Result{Reason: ReasonSuperseded}, nil
		case errors.Is(cause, errChanged):
			e.count(func(s *Stats) { s.Superseded++ })
			return Result{Reason: ReasonChanged}, nil
		case ctx.Err() != nil:
			e.count(func(s *Stats) { s.Cancelled++ })
			return Result{}, ctx.Err()
		}
		e.count(func(s *Stats) { s.Errors++; s.LastError = err.Error() })
		return Result{}, err
	}
	return r, nil
}

// ask is Complete past the cache: the debounce, the context, the model.
func (e *Engine) ask(ctx context.Context, req Request, prefixText string, start, end int, lead string) (Result, error) {
	text := req.Text
	ls := lineStart(prefixText, len(prefixText))
	le := lineEnd(text, end)
	rest := text[end:le]
	if e.o.SkipCommentsStrings && !req.Invoked && inCommentOrString(prefixText[ls:], req.Language) {
		e.count(func(s *Stats) { s.Skipped++ })
		return Result{Reason: ReasonComment}, nil
	}

	// The language server's definitions are asked at once, so that they
	// come during the debounce.
	pre := prefixWindow(prefixText, len(prefixText), e.o.PrefixTokens*bytesPerToken)
	suf := suffixWindow(text, end, e.o.SuffixTokens*bytesPerToken)
	var defs <-chan struct{}
	if !e.o.NoDefinitions {
		defs = e.lookupDefinitions(req, prefixText, ls)
	}
	arrived := time.Now()
	if !req.Invoked && e.o.Debounce > 0 {
		t := time.NewTimer(e.o.Debounce)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Result{}, ctx.Err()
		}
	}
	if defs != nil {
		if wait := e.o.LSPBudget - time.Since(arrived); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-defs:
				t.Stop()
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return Result{}, ctx.Err()
			}
		}
	}

	p := e.prompt(req, prefixText, pre, end, suf, rest)

	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-e.sem }()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	e.count(func(s *Stats) { s.ModelCalls++ })
	col := collector{single: p.SingleLine, limit: maxSuggestion}
	usage, err := e.o.Model.Complete(ctx, p, col.add)
	cost := e.o.Model.Info().Cost.Of(usage)
	e.count(func(s *Stats) {
		s.InputTokens += usage.Input + usage.CacheRead + usage.CacheWrite
		s.OutputTokens += usage.Output
		s.CostUSD += cost
	})
	if err != nil {
		return Result{}, err
	}
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	s := tidy(col.b.String(), rest, text[end:], p.SingleLine)
	if s == "" {
		e.count(func(s *Stats) { s.Empty++ })
		return Result{Reason: ReasonEmpty}, nil
	}
	if req.Selected == nil {
		e.mu.Lock()
		c := e.caches[req.URI]
		if c == nil {
			c = &docCache{}
			e.caches[req.URI] = c
		}
		c.store(text, req.Offset, s)
		e.mu.Unlock()
	}
	return Result{Text: lead + s, Start: start, End: end, Source: "model"}, nil
}

// prompt assembles what the model is asked: the windows pre..cursor and
// end..suf, the stop rules, and the snippets and definitions.
func (e *Engine) prompt(req Request, prefixText string, pre, end, suf int, rest string) *Prompt {
	text := req.Text
	p := &Prompt{
		Path: e.rel(req.Path), Language: req.Language,
		Prefix: prefixText[pre:], Suffix: text[end:suf],
		SingleLine: singleLine(rest), MaxTokens: e.o.MaxTokens, Temperature: e.o.Temperature,
	}
	if req.Path == "" {
		p.Path = req.URI
	}
	p.Stop = append(p.Stop, e.o.Stop...)
	if p.SingleLine {
		p.Stop = append([]string{"\n"}, p.Stop...)
	}
	if !e.o.NoBuffers {
		p.Files = e.snippets(req, p.Prefix)
	}
	if !e.o.NoDefinitions {
		p.Files = append(p.Files, e.definitions(req, prefixText, p.Prefix, p.Suffix)...)
	}

	return p
}

// Stats are the completions of a workspace since darman lsp started, for
// darman.status: apart from the agent's sessions.
type Stats struct {
	Model string `json:"model"`
	// Wire says how the model is reached.
	Wire         string  `json:"wire"`
	Requests     int     `json:"requests"`
	ModelCalls   int     `json:"modelCalls"`
	CacheHits    int     `json:"cacheHits"`
	Superseded   int     `json:"superseded"`
	Cancelled    int     `json:"cancelled"`
	Excluded     int     `json:"excluded"`
	Skipped      int     `json:"skipped"`
	Empty        int     `json:"empty"`
	Errors       int     `json:"errors"`
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	CostUSD      float64 `json:"costUSD"`
	// LSPQueries counts definition lookups asked of the language server,
	// LSPMillis their total time; LSPLate those still running when a
	// completion stopped waiting.
	LSPQueries int    `json:"lspQueries"`
	LSPMillis  int64  `json:"lspMillis"`
	LSPLate    int    `json:"lspLate"`
	LastError  string `json:"lastError,omitempty"`
}

// Stats returns the counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

func (e *Engine) count(f func(*Stats)) {
	e.mu.Lock()
	f(&e.stats)
	e.mu.Unlock()
}
