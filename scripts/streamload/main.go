// Command streamload measures darman under concurrent streamed answers:
// it starts the scripted model (in this process) and one `darman acp` or
// `darman lsp` in a fresh home, opens N sessions and prompts them all at
// once; the model answers each with C chunks of 6 bytes, D apart. It
// checks that every session's text arrived exact and in order and that
// every turn ended normally (ACP stopReason end_turn; LSP state idle), then
// prints darman's peak RSS (VmHWM) and the store's size on disk. The
// issue of record is docs/benchmarks.md's "Streaming through a front".
//
// Usage:
//
//	go run ./scripts/streamload -darman bin/darman -front acp -sessions 20 [-chunks 3000] [-delay 1ms]
//
// scripts/bench-stream.sh runs the table of 1, 5 and 20 sessions on both
// fronts.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

func main() {
	bin := flag.String("darman", "bin/darman", "the darman binary")
	front := flag.String("front", "acp", "acp or lsp")
	sessions := flag.Int("sessions", 1, "concurrent sessions")
	chunks := flag.Int("chunks", 3000, "chunks per answer (6 bytes each)")
	delay := flag.Duration("delay", time.Millisecond, "pause before each chunk")
	flag.Parse()
	if err := run(*bin, *front, *sessions, *chunks, *delay); err != nil {
		fmt.Fprintln(os.Stderr, "streamload:", err)
		os.Exit(1)
	}
}

func run(bin, front string, n, chunks int, delay time.Duration) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	parts := make([]string, chunks)
	for i := range parts {
		parts[i] = fmt.Sprintf("%05d ", i%100_000)
	}
	want := strings.Join(parts, "")
	srv, err := llmtest.NewServer(llmtest.Script{Reply: func(*llmtest.Call) llmtest.Step {
		return llmtest.Step{TextChunks: parts, Delay: llmtest.Duration(delay)}
	}}, nil)
	if err != nil {
		return err
	}
	defer srv.Close()

	home, err := os.MkdirTemp("", "streamload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	ws := filepath.Join(home, "project")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	config := fmt.Sprintf(`{"model": "anthropic/claude-sonnet-4-5", "provider": {"anthropic": {"baseURL": %q, "apiKey": "sk-ant-load-0000"}}}`, srv.URL)
	if err := os.WriteFile(filepath.Join(ws, "darman.json"), []byte(config), 0o600); err != nil {
		return err
	}
	dataDir := filepath.Join(home, ".local", "share", "darman")

	cmd := exec.Command(bin, front)
	cmd.Dir = ws
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"PATH=" + os.Getenv("PATH")}
	cmd.Stderr = io.Discard
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c := newConn(stdin, stdout, front == "lsp")

	start := time.Now()
	var got map[string]string
	var ends map[string]string
	if front == "acp" {
		got, ends, err = acpTurns(c, ws, n)
	} else {
		got, ends, err = lspTurns(c, ws, n)
	}
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	peak, err := peakRSS(cmd.Process.Pid)
	if err != nil {
		return err
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		return errors.New("darman did not exit within 10 s of its stdin closing")
	}
	disk, err := diskUsage(dataDir)
	if err != nil {
		return err
	}
	bad := 0
	for id, text := range got {
		if text != want {
			bad++
			fmt.Fprintf(os.Stderr, "session %s: %d bytes of text, want %d, exact %v\n", id, len(text), len(want), text == want)
		}
		if e := ends[id]; e != "end_turn" {
			bad++
			fmt.Fprintf(os.Stderr, "session %s: the turn ended %q\n", id, e)
		}
	}
	if len(got) != n {
		bad++
	}
	fmt.Printf("%s\t%d sessions\tstore on disk %.2f MB\tpeak RSS %.1f MiB\t%.1f s\ttexts exact and in order, end_turn: %v\n",
		front, n, float64(disk)/1e6, float64(peak)/1024, elapsed.Seconds(), bad == 0)
	if bad > 0 {
		return fmt.Errorf("%d sessions went wrong", bad)
	}
	return nil
}

// acpTurns runs the ACP handshake, makes n sessions and prompts them all at
// once; it returns each session's streamed text and stop reason.
func acpTurns(c *conn, ws string, n int) (map[string]string, map[string]string, error) {
	if _, err := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		return nil, nil, err
	}
	ids := make([]string, n)
	for i := range ids {
		res, err := c.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
		if err != nil {
			return nil, nil, err
		}
		var s struct{ SessionID string }
		json.Unmarshal(res, &s)
		ids[i] = s.SessionID
	}
	ends := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "stream"}}})
			if err != nil {
				errs <- err
				return
			}
			var r struct{ StopReason string }
			json.Unmarshal(res, &r)
			mu.Lock()
			ends[id] = r.StopReason
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, nil, err
	}
	return c.texts("session/update"), ends, nil
}

// lspTurns does the same through `darman lsp`: darman.session.new, then
// darman.prompt for every session, each turn ending with state idle.
func lspTurns(c *conn, ws string, n int) (map[string]string, map[string]string, error) {
	root := (&url.URL{Scheme: "file", Path: ws}).String()
	caps := map[string]any{"experimental": map[string]any{"darman": map[string]bool{"sessionUpdates": true}}}
	if _, err := c.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": root, "capabilities": caps}); err != nil {
		return nil, nil, err
	}
	c.notify("initialized", map[string]any{})
	ids := make([]string, n)
	for i := range ids {
		res, err := c.call("workspace/executeCommand", map[string]any{"command": "darman.session.new"})
		if err != nil {
			return nil, nil, err
		}
		var s struct{ SessionID string }
		json.Unmarshal(res, &s)
		ids[i] = s.SessionID
	}
	for _, id := range ids {
		if _, err := c.call("workspace/executeCommand", map[string]any{"command": "darman.prompt",
			"arguments": []any{map[string]any{"sessionId": id, "prompt": "stream"}}}); err != nil {
			return nil, nil, err
		}
	}
	deadline := time.After(10 * time.Minute)
	for {
		ends := c.ends()
		if len(ends) == n {
			return c.texts("darman/sessionUpdate"), ends, nil
		}
		select {
		case <-c.changed:
		case <-c.closed:
			return nil, nil, errors.New("darman closed its output before every turn ended")
		case <-deadline:
			return nil, nil, fmt.Errorf("%d of %d turns ended in 10 minutes", len(ends), n)
		}
	}
}

// conn is a JSON-RPC connection to darman: newline-delimited (ACP) or with
// Content-Length headers (LSP). Requests darman sends are answered null.
type conn struct {
	w   io.Writer
	lsp bool
	wmu sync.Mutex

	mu      sync.Mutex
	next    int
	pending map[int]chan json.RawMessage
	text    map[string]map[string]*strings.Builder // method → session → text
	ended   map[string]string                      // LSP: session → end state
	changed chan struct{}
	closed  chan struct{}
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func newConn(w io.Writer, r io.Reader, lsp bool) *conn {
	c := &conn{w: w, lsp: lsp, pending: map[int]chan json.RawMessage{}, text: map[string]map[string]*strings.Builder{},
		ended: map[string]string{}, changed: make(chan struct{}, 1), closed: make(chan struct{})}
	go c.read(bufio.NewReaderSize(r, 1<<20))
	return c
}

func (c *conn) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.lsp {
		_, err = fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(b), b)
	} else {
		_, err = fmt.Fprintf(c.w, "%s\n", b)
	}
	return err
}

func (c *conn) call(method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan json.RawMessage, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	select {
	case res, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: %s", method, res)
		}
		return res, nil
	case <-c.closed:
		return nil, fmt.Errorf("%s: darman closed its output", method)
	}
}

func (c *conn) notify(method string, params any) error {
	return c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (c *conn) read(r *bufio.Reader) {
	defer close(c.closed)
	for {
		body, err := c.frame(r)
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // a request to the client
			c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
		case m.Method != "":
			c.update(m.Method, m.Params)
		default:
			id, _ := strconv.Atoi(string(m.ID))
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch == nil {
				continue
			}
			if len(m.Error) > 0 {
				ch <- m.Error
				close(ch)
				continue
			}
			ch <- m.Result
		}
	}
}

func (c *conn) frame(r *bufio.Reader) ([]byte, error) {
	if !c.lsp {
		return r.ReadBytes('\n')
	}
	n := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if line == "\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

// update records a session update's text, and an LSP turn's end.
func (c *conn) update(method string, params json.RawMessage) {
	var p struct {
		SessionID string
		Update    struct {
			SessionUpdate string
			State         string
			Content       json.RawMessage
		}
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch p.Update.SessionUpdate {
	case "agent_message_chunk":
		var content struct{ Text string }
		json.Unmarshal(p.Update.Content, &content)
		bySession := c.text[method]
		if bySession == nil {
			bySession = map[string]*strings.Builder{}
			c.text[method] = bySession
		}
		b := bySession[p.SessionID]
		if b == nil {
			b = &strings.Builder{}
			bySession[p.SessionID] = b
		}
		b.WriteString(content.Text)
	case "state_update":
		switch p.Update.State {
		case "idle":
			c.ended[p.SessionID] = "end_turn"
		case "failed", "cancelled":
			c.ended[p.SessionID] = p.Update.State
		default:
			return
		}
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
}

func (c *conn) texts(method string) map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for id, b := range c.text[method] {
		out[id] = b.String()
	}
	return out
}

func (c *conn) ends() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for id, e := range c.ended {
		out[id] = e
	}
	return out
}

// peakRSS is the process's peak resident set (VmHWM), in KiB.
func peakRSS(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading darman's peak RSS (Linux only): %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return 0, errors.New("no VmHWM in /proc/PID/status")
}

// diskUsage is the bytes the files under dir take on disk (allocated
// blocks, as du counts them: badger's preallocated files count only what
// was written).
func diskUsage(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += allocated(info)
		return nil
	})
	return total, err
}
