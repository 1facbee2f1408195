package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// ErrUnsupported is wrapped by a query the server did not offer in its
// capabilities.
var ErrUnsupported = errors.New("the language server does not offer this")

// ErrClosed is wrapped by calls on a client whose connection has ended.
var ErrClosed = errors.New("the connection to the language server is closed")

// ErrNotOpen is returned for diagnostics of a document never synced.
var ErrNotOpen = errors.New("the document is not open in the language server")

// Options configures a Client. The zero value is usable apart from Root.
type Options struct {
	// Root is the workspace folder, an absolute path.
	Root string
	// ClientVersion is sent in clientInfo; empty sends "dev".
	ClientVersion string
	// InitializationOptions is sent as initializationOptions; nil sends
	// none.
	InitializationOptions json.RawMessage
	// Settings is a JSON object answering workspace/configuration (each
	// item's section is a dotted path into it) and sent once with
	// workspace/didChangeConfiguration after initialization. nil answers
	// null to every item and sends nothing.
	Settings json.RawMessage
	// MaxItems caps the diagnostics kept for one document (a flooding
	// server cannot exhaust memory); zero means 1000.
	MaxItems int
	// MaxDocuments caps how many documents' published diagnostics are
	// kept; sets for further documents that are not open are dropped.
	// Zero means 10000.
	MaxDocuments int
	// Logger receives the server's log messages and protocol errors; nil
	// discards.
	Logger *slog.Logger
	// OnNotice, if set, is called with each window/showMessage,
	// window/logMessage and $/progress the server sends, in the order it
	// sent them and before any message that follows them is handled (a
	// publish after an error message is seen after it). It runs on the
	// connection's read goroutine, may start before Connect returns, and
	// must not block.
	OnNotice func(Notice)
}

// Notice is a message or a progress report from the server.
type Notice struct {
	// Method is window/showMessage, window/logMessage or $/progress.
	Method string
	// Type is the message's type (MessageError ... MessageLog); zero for
	// progress.
	Type MessageType
	// Message is the message's text, or the progress report's message.
	Message string
	// Token, Kind (begin, report or end) and Title describe progress.
	Token, Kind, Title string
}

// MessageType is LSP's window message type.
type MessageType = protocol.MessageType

// Message types.
const (
	MessageError   = protocol.MessageTypeError
	MessageWarning = protocol.MessageTypeWarning
	MessageInfo    = protocol.MessageTypeInfo
	MessageLog     = protocol.MessageTypeLog
)

// Client is one connection to a language server, from initialize to exit.
// It keeps the documents it opened and the diagnostics the server
// published. All methods are safe for concurrent use. Connect starts it;
// Shutdown or Close ends it.
type Client struct {
	conn   *jsonrpc2.Conn
	opts   Options
	log    *slog.Logger
	cancel context.CancelFunc
	caps   Capabilities
	info   ServerInfo
	nextID atomic.Uint64
	// kept holds the large results of calls in flight (see results.go).
	kept keptResults

	// syncMu orders document changes as they are written to the server.
	// It is never held together with mu while waiting on anything.
	syncMu sync.Mutex

	mu         sync.Mutex
	docs       map[DocumentURI]*document
	published  map[DocumentURI]*published
	seq        uint64 // counts publishes and pulls
	changed    chan struct{}
	progress   map[string]time.Time // active work-done progress by token
	registered map[string]string    // dynamically registered method by registration id
	protoErr   error                // why the connection ended, when it was the server's fault
	// tsserverBroken says typescript.tsserverRequest answered something
	// other than tsserver's response once: waits use publishes only.
	tsserverBroken bool
}

type document struct {
	languageID string
	version    int32
	text       []byte
	sentSeq    uint64 // c.seq when this version was sent
	sentAt     time.Time
	rounds     int    // publishes for this version
	resultID   string // of the last pull
}

type published struct {
	version *int32
	items   []Diagnostic
	seq     uint64
	at      time.Time
	pulled  bool // asked for (textDocument/diagnostic or tsserver) rather than published
}

// Connect runs the initialize handshake over rwc and returns the ready
// client. ctx bounds the handshake only; the connection lives until
// Shutdown or Close. On error rwc is closed.
func Connect(ctx context.Context, rwc io.ReadWriteCloser, opts Options) (*Client, error) {
	if opts.MaxItems <= 0 {
		opts.MaxItems = 1000
	}
	if opts.MaxDocuments <= 0 {
		opts.MaxDocuments = 10000
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		opts:       opts,
		log:        log,
		docs:       map[DocumentURI]*document{},
		published:  map[DocumentURI]*published{},
		changed:    make(chan struct{}),
		progress:   map[string]time.Time{},
		registered: map[string]string{},
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	stream := recordingStream{jsonrpc2.NewBufferedStream(rwc, jsonrpc2.VSCodeObjectCodec{}), c}
	c.conn = jsonrpc2.NewConn(life, stream, handler{c}, jsonrpc2.SetLogger(protoLogger{c}))
	go func() {
		<-c.conn.DisconnectNotify()
		c.broadcast()
	}()

	var result struct {
		Capabilities json.RawMessage `json:"capabilities"`
		ServerInfo   ServerInfo      `json:"serverInfo"`
	}
	if err := c.call(ctx, "initialize", c.initializeParams(), &result); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.caps.decode(result.Capabilities); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	c.info = result.ServerInfo
	if err := c.notify(ctx, "initialized", struct{}{}); err != nil {
		c.Close()
		return nil, err
	}
	if len(opts.Settings) > 0 {
		if err := c.notify(ctx, "workspace/didChangeConfiguration", protocol.DidChangeConfigurationParams{Settings: opts.Settings}); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

var symbolKinds = func() []int {
	k := make([]int, 26)
	for i := range k {
		k[i] = i + 1
	}
	return k
}()

// initializeParams declares only what the client really does.
func (c *Client) initializeParams() map[string]any {
	root := URIFromPath(c.opts.Root)
	version := c.opts.ClientVersion
	if version == "" {
		version = "dev"
	}
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]any{"name": "darman", "version": version},
		"rootUri":          root,
		"rootPath":         c.opts.Root,
		"workspaceFolders": []any{map[string]any{"uri": root, "name": filepath.Base(c.opts.Root)}},
		"trace":            "off",
		"capabilities": map[string]any{
			"general": map[string]any{
				"positionEncodings": []string{"utf-16", "utf-8", "utf-32"},
			},
			"window": map[string]any{
				"workDoneProgress": true,
			},
			"workspace": map[string]any{
				"configuration":          true,
				"workspaceFolders":       true,
				"didChangeConfiguration": map[string]any{"dynamicRegistration": false},
				"didChangeWatchedFiles":  map[string]any{"dynamicRegistration": true},
				"symbol": map[string]any{
					"dynamicRegistration": false,
					"symbolKind":          map[string]any{"valueSet": symbolKinds},
				},
				"diagnostics": map[string]any{"refreshSupport": true},
				"workspaceEdit": map[string]any{
					"documentChanges":    true,
					"resourceOperations": []string{"create", "rename", "delete"},
				},
			},
			"textDocument": map[string]any{
				"synchronization": map[string]any{"dynamicRegistration": false},
				"publishDiagnostics": map[string]any{
					"versionSupport":         true,
					"relatedInformation":     true,
					"codeDescriptionSupport": true,
				},
				"diagnostic": map[string]any{"dynamicRegistration": true},
				"hover": map[string]any{
					"contentFormat": []string{"markdown", "plaintext"},
				},
				"definition": map[string]any{"linkSupport": true},
				"references": map[string]any{},
				"documentSymbol": map[string]any{
					"hierarchicalDocumentSymbolSupport": true,
					"symbolKind":                        map[string]any{"valueSet": symbolKinds},
				},
				"rename":     map[string]any{"prepareSupport": false},
				"formatting": map[string]any{},
			},
		},
	}
	if c.opts.InitializationOptions != nil {
		params["initializationOptions"] = c.opts.InitializationOptions
	}
	return params
}

// Capabilities returns what the server said it can do.
func (c *Client) Capabilities() Capabilities { return c.caps }

// ServerInfo returns the server's name and version, when it gave them.
func (c *Client) ServerInfo() ServerInfo { return c.info }

// Done is closed when the connection has ended, for whatever reason.
func (c *Client) Done() <-chan struct{} { return c.conn.DisconnectNotify() }

// Err says why the connection ended when the server broke the protocol
// (wrote something that is not a message); nil otherwise.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.protoErr
}

// call sends a request and waits for its answer. When ctx ends first, the
// server is told with $/cancelRequest.
func (c *Client) call(ctx context.Context, method string, params, result any) error {
	id := jsonrpc2.ID{Num: c.nextID.Add(1)}
	if result != nil {
		c.kept.expect(id.Num)
		defer c.kept.done(id.Num)
		result = &waitedResult{k: &c.kept, id: id.Num, v: result}
	}
	w, err := c.conn.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		return c.wrap(method, err)
	}
	err = w.Wait(ctx, result)
	if err != nil && ctx.Err() != nil {
		c.conn.Notify(context.WithoutCancel(ctx), "$/cancelRequest", map[string]any{"id": id})
		return fmt.Errorf("%s: no answer from the language server: %w", method, ctx.Err())
	}
	if err != nil {
		return c.wrap(method, err)
	}
	return nil
}

func (c *Client) notify(ctx context.Context, method string, params any) error {
	if err := c.conn.Notify(ctx, method, params); err != nil {
		return c.wrap(method, err)
	}
	return nil
}

func (c *Client) wrap(method string, err error) error {
	if errors.Is(err, jsonrpc2.ErrClosed) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
		if perr := c.Err(); perr != nil {
			return fmt.Errorf("%s: %w (%v)", method, ErrClosed, perr)
		}
		return fmt.Errorf("%s: %w", method, ErrClosed)
	}
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) {
		return fmt.Errorf("%s: the language server answered with error %d: %s", method, rpcErr.Code, rpcErr.Message)
	}
	return fmt.Errorf("%s: %w", method, err)
}

// Shutdown ends the session politely: the shutdown request (bounded by
// ctx), the exit notification, then Close. The process behind the
// connection is its owner's to reap.
func (c *Client) Shutdown(ctx context.Context) error {
	err := c.call(ctx, "shutdown", nil, nil)
	if err == nil {
		err = c.notify(ctx, "exit", nil)
	}
	c.Close()
	return err
}

// Close ends the connection without ceremony.
func (c *Client) Close() error {
	c.cancel()
	err := c.conn.Close()
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return nil
	}
	return err
}

// broadcast wakes every waiter; the caller may hold mu.
func (c *Client) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Client) broadcast() {
	c.mu.Lock()
	c.broadcastLocked()
	c.mu.Unlock()
}

// recordingStream keeps the reason reading failed, before the connection
// reports that it has closed, and keeps the large results of the
// client's calls aside from jsonrpc2 (see keptResults).
type recordingStream struct {
	jsonrpc2.ObjectStream
	c *Client
}

func (s recordingStream) ReadObject(v any) error {
	var msg json.RawMessage
	err := s.ObjectStream.ReadObject(&msg)
	if err == nil {
		err = json.Unmarshal(s.c.kept.strip(msg), v)
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, os.ErrClosed) {
		s.c.mu.Lock()
		if s.c.protoErr == nil {
			s.c.protoErr = fmt.Errorf("the server wrote something that is not an LSP message: %w", err)
		}
		s.c.mu.Unlock()
	}
	return err
}

// protoLogger sends jsonrpc2's own complaints to the log.
type protoLogger struct{ c *Client }

func (l protoLogger) Printf(format string, v ...any) {
	l.c.log.Debug("jsonrpc2", "message", strings.TrimSpace(fmt.Sprintf(format, v...)))
}
