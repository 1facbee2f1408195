// Package terminal is darman run's human at the terminal: the permission
// questions and MCP elicitations asked on the controlling terminal
// (Asker), and a turn's events rendered for a shell, as text or JSON lines
// ending with one result (Renderer).
package terminal

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/darman-dev/darman/agent/permission"
)

// Asker asks permission questions on the user's terminal: the
// question on out, the answer read from in (the controlling terminal, so
// that a prompt piped into darman run does not answer questions). It is
// also the terminal's permission.Elicitor (see Elicit), so the two never
// talk over each other. Safe for concurrent use: one question at a time.
type Asker struct {
	in  *bufio.Reader
	out io.Writer
	mu  sync.Mutex // one question at a time; held for what follows

	// One goroutine reads the terminal for every question: a question
	// given up (its turn cancelled) must not leave a reader behind that
	// takes the answer to the next one. Started by the first question.
	lines chan string // closed at the end of the input
}

// line returns the next line typed, without its end ("" at the end of
// the input), or gives up when ctx ends.
func (a *Asker) line(ctx context.Context) (string, error) {
	if a.lines == nil {
		a.lines = make(chan string, 1)
		go a.read()
	}
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case s := <-a.lines:
		return s, nil
	}
}

func (a *Asker) read() {
	defer close(a.lines)
	for {
		s, err := a.in.ReadString('\n')
		if err != nil && s == "" {
			return
		}
		a.lines <- strings.TrimSpace(s)
		if err != nil {
			return
		}
	}
}

// fresh drops a line typed while no question waited (the answer to one
// that was given up), so it does not answer the next.
func (a *Asker) fresh() {
	if a.lines == nil {
		return
	}
	select {
	case <-a.lines:
	default:
	}
}

// Open opens the controlling terminal, or returns nil when
// there is none (CI, a pipe, an editor).
func Open(out io.Writer) *Asker {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return nil
	}
	return &Asker{in: bufio.NewReader(tty), out: out}
}

func (a *Asker) Ask(ctx context.Context, req permission.Request) (permission.Reply, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fresh()
	fmt.Fprintf(a.out, "\n? darman asks to use %s: %s\n", req.Permission, req.Title)
	for _, why := range req.Reasons {
		fmt.Fprintf(a.out, "  ! %s\n", why)
	}
	always := "always"
	if len(req.Suggest) > 0 {
		always = "always allow " + strings.Join(req.Suggest, ", ")
	}
	fmt.Fprintf(a.out, "  [y] allow once  [a] %s  [n] reject  [d] reject always  (or type why you reject it)\n> ", always)
	s, err := a.line(ctx)
	if err != nil {
		return permission.Reply{}, err
	}
	switch strings.ToLower(s) {
	case "y", "yes":
		return permission.Reply{Answer: permission.AllowOnce}, nil
	case "a", "always":
		return permission.Reply{Answer: permission.AllowAlways}, nil
	case "n", "no", "":
		return permission.Reply{Answer: permission.RejectOnce}, nil
	case "d":
		return permission.Reply{Answer: permission.RejectAlways}, nil
	default:
		return permission.Reply{Answer: permission.RejectOnce, Message: s}, nil
	}
}

// New returns an Asker that reads the answers from in and writes the
// questions to out.
func New(in io.Reader, out io.Writer) *Asker {
	return &Asker{in: bufio.NewReader(in), out: out}
}

// Line asks a free question: text is written as it is, and the line typed
// is returned trimmed ("" at the end of the input).
func (a *Asker) Line(ctx context.Context, text string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fresh()
	fmt.Fprint(a.out, text)
	return a.line(ctx)
}
