package diagnostics

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/darman-dev/darman/diagnostics/lsp"
)

// A language server can run and answer while it has not loaded the
// workspace: gopls without the go command answers every query with
// nothing. So the pool watches what each instance says while it loads
// (error messages, progress) and, when it cannot load, answers queries
// with a LoadError instead of the server's empty answers.
//
// An instance is loading from its start until it has published (or been
// asked for) diagnostics, or answered a query, and no work-done progress
// it began while loading is still running. It has failed to load when:
//   - while loading, it sends an error-level window/showMessage or
//     window/logMessage;
//   - at any time, a message, a progress report or a query's error has
//     one of the known shapes of a load failure (loadShapes);
//   - a progress it began while loading runs longer than
//     Options.LoadTimeout.
//
// It recovers when the same load runs again and finishes cleanly (a
// progress with the title of one of its loading progresses ends with no
// error before it). Since most servers load once, the pool also starts a
// failed instance again on the next use after a backoff (Options.Backoff,
// doubling per failed instance, at most a minute): a fixed environment
// (go installed, a configuration repaired) then serves without restarting
// darman.

// ErrCannotLoad is wrapped when a running language server cannot load the
// workspace, so its answers would be wrong (empty) rather than missing.
var ErrCannotLoad = errors.New("the language server cannot load the workspace")

// LoadError says a running language server cannot load the workspace: in
// darman's words, in the server's own, and what to do. It wraps
// ErrCannotLoad.
type LoadError struct {
	// Server is the configuration key (go); Program the executable's name
	// (gopls).
	Server  string `json:"server"`
	Program string `json:"program"`
	Root    string `json:"root"`
	// Cause is what is wrong: "gopls cannot find the `go` command".
	Cause string `json:"cause"`
	// Said is the server's own message, on one line.
	Said string `json:"said,omitempty"`
	// Advice is what to do: "put Go on PATH for darman mcp's
	// environment".
	Advice string `json:"advice"`
	// RetryAt is when the next use starts the server again to see whether
	// it recovered; zero when the pool waits for the server itself (a load
	// still running).
	RetryAt time.Time `json:"retryAt,omitzero"`
}

func (e *LoadError) Error() string {
	s := e.Cause + ": " + e.Advice
	if e.Said != "" {
		s += fmt.Sprintf(" (%s said: %q)", e.Program, e.Said)
	}
	if !e.RetryAt.IsZero() {
		s += "; darman starts it again on the next call"
		if d := time.Until(e.RetryAt); d > 0 {
			s += fmt.Sprintf(" after %v", d.Round(100*time.Millisecond))
		}
	}
	return s
}

func (e *LoadError) Unwrap() error { return ErrCannotLoad }

// PartialError comes with the results of a workspace-wide query that some
// of the servers asked could not answer: each of Missing says which and
// why (a *LoadError for a server that cannot load the workspace).
type PartialError struct {
	Missing []error
}

func (e *PartialError) Error() string {
	parts := make([]string, len(e.Missing))
	for i, err := range e.Missing {
		parts[i] = err.Error()
	}
	return "part of the answer is missing: " + strings.Join(parts, "; ")
}

func (e *PartialError) Unwrap() []error { return e.Missing }

// LoadState is how a running server's loading of the workspace stands.
type LoadState string

const (
	LoadLoading LoadState = "loading"
	LoadLoaded  LoadState = "loaded"
	LoadFailed  LoadState = "failed"
)

// loadShape is a known way a server says it cannot load the workspace.
type loadShape struct {
	// any of these in the message
	match []string
	// cause and advice: {program} is the server's executable's name,
	// {process} the process whose environment the servers inherit.
	cause, advice string
}

var loadShapes = []loadShape{
	{
		match:  []string{"go command required", `exec: "go": executable file not found`},
		cause:  "{program} cannot find the `go` command",
		advice: "put Go on PATH for {process}'s environment",
	},
	{
		match:  []string{"Error loading workspace folders", "Error loading packages"},
		cause:  "{program} cannot load the workspace",
		advice: "fix what it says (`go list ./...` in the module shows the same error)",
	},
	{
		// tsserver's answer for a file it holds in no project.
		match:  []string{"No Project."},
		cause:  "{program} has no TypeScript project for the file",
		advice: "check that TypeScript is installed where {program} looks (npm install typescript in the project) and that a tsconfig.json or jsconfig.json includes the file",
	},
	{
		// pyright's configuration errors.
		match:  []string{"could not be parsed. Verify that format is correct", "Config file \"", "Pyproject file \""},
		cause:  "{program} cannot read its configuration",
		advice: "fix the file it names (pyrightconfig.json, or [tool.pyright] in pyproject.toml)",
	},
}

// genericShape is an error-level message while loading, of no known shape.
var genericShape = loadShape{
	cause:  "{program} reported an error while loading the workspace",
	advice: "fix what it says",
}

func matchShape(msg string) *loadShape {
	for i := range loadShapes {
		for _, m := range loadShapes[i].match {
			if strings.Contains(msg, m) {
				return &loadShapes[i]
			}
		}
	}
	return nil
}

// maxSaid caps the server's message quoted in a LoadError.
const maxSaid = 400

// health is one server instance's loading of the workspace, as its
// notices tell it. Its fields are guarded by the pool's mu.
type health struct {
	client *lsp.Client // once connected
	// open is the progress begun while loading and still running, by
	// token.
	open map[string]progressRun
	// titles are those of the progress begun while loading; a later run
	// of one is the load running again.
	titles map[string]bool
	// reloads are the runs of a loading progress begun after the failure;
	// reloadErr says an error came while one ran.
	reloads   map[string]bool
	reloadErr bool
	queried   bool // it answered a query
	loaded    bool
	// started is when the instance was started; settled when its last
	// loading progress ended (zero while one runs, or if none ran);
	// loadTime, once loaded, how long the load took.
	started, settled time.Time
	loadTime         time.Duration
	fail             *LoadError
	// failNote says fail quotes a progress report, not a message.
	failNote bool
}

type progressRun struct {
	title, message string
	since          time.Time
}

func newHealth() *health {
	return &health{open: map[string]progressRun{}, titles: map[string]bool{}, reloads: map[string]bool{}, started: time.Now()}
}

// answeredLocked says the server has shown it works on the workspace.
func (h *health) answeredLocked() bool {
	return h.queried || (h.client != nil && h.client.Seq() > 0)
}

// notice takes in what the server said. It runs on the connection's read
// goroutine.
func (e *entry) notice(h *health, n lsp.Notice) {
	p := e.pool
	p.mu.Lock()
	if e.health != h {
		// An instance being replaced: its words no longer count.
		p.mu.Unlock()
		return
	}
	changed := e.observeLocked(h, n)
	failed := h.fail != nil
	running := e.state == StateRunning
	var st ServerStatus
	if changed && running {
		st = e.statusLocked()
	}
	p.mu.Unlock()
	switch {
	case changed && failed:
		p.log.Warn("language server cannot load the workspace", "server", e.srv.name, "root", e.root, "message", n.Message)
	case changed:
		p.log.Info("language server loaded the workspace again", "server", e.srv.name, "root", e.root)
	}
	if changed && running {
		p.notify(st)
	}
}

// observeLocked updates h with n and reports whether h's verdict changed.
func (e *entry) observeLocked(h *health, n lsp.Notice) bool {
	loading := !h.loaded && !(len(h.open) == 0 && h.answeredLocked())
	switch n.Method {
	case "$/progress":
		switch n.Kind {
		case "begin":
			if loading {
				h.open[n.Token] = progressRun{title: n.Title, message: n.Message, since: time.Now()}
				h.titles[n.Title] = true
			} else if h.fail != nil && h.titles[n.Title] {
				h.reloads[n.Token], h.reloadErr = true, false
			}
		case "report":
			if r, ok := h.open[n.Token]; ok && n.Message != "" {
				r.message = n.Message
				h.open[n.Token] = r
			}
		case "end":
			if _, ok := h.open[n.Token]; ok {
				delete(h.open, n.Token)
				if len(h.open) == 0 {
					h.settled = time.Now()
				}
			}
			if shape := matchShape(n.Message); shape != nil {
				changed := e.failLocked(h, shape, n.Message)
				h.failNote = h.failNote || changed
				return changed
			}
			if h.reloads[n.Token] {
				delete(h.reloads, n.Token)
				if !h.reloadErr && h.fail != nil {
					// The load ran again and finished cleanly.
					h.fail = nil
					e.loadFailures = 0
					return true
				}
			}
		}
	case "window/showMessage", "window/logMessage":
		if n.Type != lsp.MessageError && n.Type != lsp.MessageWarning {
			return false
		}
		shape := matchShape(n.Message)
		if shape == nil && n.Type == lsp.MessageError && (loading || len(h.reloads) > 0) {
			// An error while it loads, or loads again.
			shape = &genericShape
		}
		if shape == nil {
			return false
		}
		if len(h.reloads) > 0 {
			h.reloadErr = true
		}
		if h.fail != nil && h.failNote && shape != &genericShape {
			// A message says more than the progress report that came
			// first (gopls's names the folder it could not load).
			h.fail.Said, h.failNote = e.loadError(shape, n.Message).Said, false
		}
		return e.failLocked(h, shape, n.Message)
	}
	return false
}

// failLocked marks h failed, unless it already is; the first message is
// the one kept (gopls repeats it for each folder it tries).
func (e *entry) failLocked(h *health, shape *loadShape, said string) bool {
	if h.fail != nil {
		return false
	}
	e.loadFailures++
	h.fail = e.loadError(shape, said)
	h.fail.RetryAt = time.Now().Add(backoff(e.pool.opts.Backoff, e.loadFailures))
	return true
}

func (e *entry) loadError(shape *loadShape, said string) *LoadError {
	program := e.program()
	r := strings.NewReplacer("{program}", program, "{process}", e.pool.opts.Process)
	said = strings.TrimSuffix(oneLine(said), ": stderr:")
	if len(said) > maxSaid {
		said = said[:maxSaid] + "…"
	}
	return &LoadError{Server: e.srv.name, Program: program, Root: e.root, Cause: r.Replace(shape.cause), Said: said, Advice: r.Replace(shape.advice)}
}

// program is the server's executable's name, for messages.
func (e *entry) program() string {
	if len(e.argv) > 0 {
		return filepath.Base(e.argv[0])
	}
	if len(e.srv.commands) > 0 && len(e.srv.commands[0].argv) > 0 {
		return filepath.Base(e.srv.commands[0].argv[0])
	}
	return e.srv.name
}

// loadErrLocked is the current instance's verdict: nil while it loads or
// once it has loaded, else why it cannot. It also notes that the load
// ended, returning recovered when that ends a run of failed instances.
func (e *entry) loadErrLocked() (le *LoadError, recovered bool) {
	h := e.health
	if h == nil || e.state != StateRunning {
		return nil, false
	}
	if h.fail != nil {
		f := *h.fail
		return &f, false
	}
	if h.loaded {
		return nil, false
	}
	if len(h.open) == 0 && h.answeredLocked() {
		h.loaded = true
		// The load ended with its last progress, or, for a server that
		// reports none, by the time it was seen to answer.
		end := h.settled
		if end.IsZero() {
			end = time.Now()
		}
		h.loadTime = end.Sub(h.started)
		recovered = e.loadFailures > 0
		e.loadFailures = 0
		return nil, recovered
	}
	limit := e.pool.opts.LoadTimeout
	for _, r := range h.open {
		if d := time.Since(r.since); d > limit {
			said := r.title
			if r.message != "" {
				said += ": " + r.message
			}
			le := e.loadError(&loadShape{
				cause:  fmt.Sprintf("{program} has not finished loading the workspace after %v", d.Round(time.Second)),
				advice: "wait for it and try again; if it never finishes, see its log (darman's log at debug level)",
			}, said)
			return le, false
		}
	}
	return nil, false
}

// loadTimeLocked is how long the current instance took to load the
// workspace, or has been loading it.
func (e *entry) loadTimeLocked() time.Duration {
	h := e.health
	switch {
	case h == nil || e.state != StateRunning:
		return 0
	case h.loaded:
		return h.loadTime
	}
	return time.Since(h.started)
}

// loadState is what Status says of the current instance's load.
func (e *entry) loadStateLocked() (LoadState, *LoadError) {
	if e.health == nil || e.state != StateRunning {
		return "", nil
	}
	le, _ := e.loadErrLocked()
	switch {
	case le != nil:
		return LoadFailed, le
	case e.health.loaded:
		return LoadLoaded, nil
	}
	return LoadLoading, nil
}

// verdict says whether e's current instance can answer: nil, or a
// *LoadError.
func (p *Pool) verdict(e *entry) error { return p.answered(e, false, nil) }

// answered is verdict after a query to e's current instance, which
// returned err (nil when it answered): a query's error may itself be a
// load failure; its other errors are returned as they are.
func (p *Pool) answered(e *entry, queried bool, err error) error {
	p.mu.Lock()
	h := e.health
	changed := false
	if h != nil && e.state == StateRunning {
		if err != nil {
			if shape := matchShape(err.Error()); shape != nil {
				changed = e.failLocked(h, shape, err.Error())
			}
		} else if queried {
			h.queried = true
		}
	}
	le, recovered := e.loadErrLocked()
	var st ServerStatus
	if changed || recovered {
		st = e.statusLocked()
	}
	p.mu.Unlock()
	if changed || recovered {
		p.notify(st)
	}
	if le != nil {
		return le
	}
	return err
}
