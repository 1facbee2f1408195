package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/darman-dev/darman/diagnostics"
	"github.com/darman-dev/darman/internal/child"
	"github.com/darman-dev/darman/internal/config"
)

// SchemaVersion is the version of every tool's structured output.
const SchemaVersion = "1.0"

// Options configures a Server. Only Root is required.
type Options struct {
	// Root is the project every tool works in.
	Root Root
	// Servers is the configuration's lsp map; nil uses the built-ins.
	Servers map[string]config.LSP
	// Env is the language servers' environment; nil means darman's own.
	Env []string
	// Children records the language servers' process groups; nil records
	// nothing.
	Children *child.Registry
	// Wait bounds how long a diagnostics query waits for the server's
	// answer for the file's version; zero means 10 s.
	Wait time.Duration
	// ToolTimeout bounds each tool call; zero means 60 s.
	ToolTimeout time.Duration
	// Instructions are given to clients at initialize; empty gives
	// Instructions().
	Instructions string
	// Version is darman's version, given to clients and servers.
	Version string
	// Logger receives the server's logs; nil discards.
	Logger *slog.Logger
	// Lazy leaves the language servers idle until a tool needs one;
	// otherwise the first client's first message starts those of the
	// project's languages in the background (see Pool.Warm).
	Lazy bool
	// WarmTimeout bounds that background start; zero means 2 minutes.
	WarmTimeout time.Duration
}

// Server is one `darman mcp`: the MCP server and the pool of language
// servers behind it. It lives until Close.
type Server struct {
	opts    Options
	root    Root
	log     *slog.Logger
	pool    *diagnostics.Pool
	overlay *overlay
	mcp     *mcp.Server
	warm    sync.Once
	// apis keeps package_api's reading of each file.
	apis apiFiles
}

// New builds the server and its (idle) pool: the language servers start
// when a client connects (unless Options.Lazy) or a tool needs one.
// The pool ends with ctx or Close.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Root.Dir == "" {
		return nil, fmt.Errorf("%s: mcp server: no project root given", CodeProjectNotFound)
	}
	if opts.Wait <= 0 {
		opts.Wait = 10 * time.Second
	}
	if opts.ToolTimeout <= 0 {
		opts.ToolTimeout = time.Minute
	}
	if opts.WarmTimeout <= 0 {
		opts.WarmTimeout = 2 * time.Minute
	}
	if opts.Instructions == "" {
		opts.Instructions = Instructions()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ov := newOverlay()
	pool, err := diagnostics.New(ctx, diagnostics.Options{
		Root:    opts.Root.Dir,
		Servers: opts.Servers,
		Files:   ov,
		Env:     opts.Env,
		Process: "darman mcp",
		Wait:    opts.Wait,
		// A query on a server still loading the project (tsserver takes
		// seconds) waits as long as the tool may.
		QueryTimeout:  opts.ToolTimeout,
		Children:      opts.Children,
		ClientVersion: opts.Version,
		Logger:        log,
	})
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, root: opts.Root, log: log, pool: pool, overlay: ov}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "darman", Title: "darman: the workspace's language servers", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: opts.Instructions,
		Logger:       log,
	})
	s.mcp.AddReceivingMiddleware(s.warmOnContact, s.recoverPanics, tagInputErrors)
	s.addTools()
	return s, nil
}

// warmOnContact starts the project's language servers in the background
// once, at a client's first message (initialize, or server/discover for
// clients of the stateless protocol that skip it): their load (seconds
// for gopls on a large module) then overlaps the client's own start and
// the model's first turn instead of delaying the first answer. Close, or
// the pool's context ending, cancels it.
func (s *Server) warmOnContact(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !s.opts.Lazy {
			s.warm.Do(func() { s.pool.Warm(context.Background(), s.opts.WarmTimeout) })
		}
		return next(ctx, method, req)
	}
}

// MCP is the server as the SDK serves it.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Root is the project root the tools work in.
func (s *Server) Root() Root { return s.root }

// Run serves one client over t until it disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, t)
}

// RunStdio serves one client over in and out (darman mcp's stdio, with
// NewStdio's answers to lines the SDK cannot read) until the client closes
// its side or ctx ends; either is a normal end, not an error.
func (s *Server) RunStdio(ctx context.Context, in io.Reader, out io.Writer, log *slog.Logger) error {
	err := s.Run(ctx, NewStdio(in, out, 0, log))
	if err != nil && ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return err
	}
	return nil
}

// Close stops every language server.
func (s *Server) Close() error { return s.pool.Close() }

func (s *Server) addTools() {
	s.addDiagnostics()
	s.addCheckSource()
	s.addLookupSymbol()
	s.addFindReferences()
	s.addDefinition()
	s.addDescribeSymbol()
	s.addOutline()
	s.addPackageAPI()
	s.addRenameSymbol()
	s.addFormatSource()
	s.addListImports()
	s.addExplainDiagnostic()
}

// envelope starts every tool's output.
type envelope struct {
	SchemaVersion string `json:"schemaVersion" jsonschema:"the version of this output's shape, 1.0"`
}

func (e *envelope) stamp() { e.SchemaVersion = SchemaVersion }

// textOnly is the output of a tool that answers in text alone, without
// a structured copy: one whose text already is its data, line by line.
// Clients give their model one of the two (Claude Code and VS Code the
// structured copy when there is one, others the text), so a copy would
// only cross the wire again and, for the first, replace a compact text
// with JSON twice its size.
type textOnly struct{}

// handler is a tool's logic: its structured output and a readable text
// rendering of it, or an error (a *ToolError, or one the pool returned).
type handler[In, Out any] func(ctx context.Context, in In) (Out, string, error)

// addTool registers a tool whose input schema has each field's example
// (the `example` tag, JSON) and whose output schema is Out's, and whose
// calls are bounded by ToolTimeout, with errors classified into codes.
//
// It registers a raw handler rather than the SDK's typed one: the
// arguments are validated against the schema and decoded once, and the
// output, typed by construction, is marshalled once, not marshalled,
// decoded, validated and marshalled again as the SDK does for any type
// (that round trip was most of darman's time per call). Marshalling it
// here also lets the text rendering be cut to what the result's budget
// leaves (see capResult).
func addTool[In, Out any](s *Server, t *mcp.Tool, h handler[In, Out]) {
	in := inputSchema[In]()
	resolved, err := in.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", t.Name, err)) // a programming error, found by every test
	}
	_, plain := any(*new(Out)).(textOnly)
	t.InputSchema = in
	if !plain {
		outSchema, err := jsonschema.For[Out](nil)
		if err != nil {
			panic(fmt.Sprintf("output schema of %s: %v", t.Name, err))
		}
		t.OutputSchema = outSchema
	}
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(ctx, s.opts.ToolTimeout)
		defer cancel()
		start := time.Now()
		args, err := decodeArguments[In](resolved, req.Params.Arguments)
		if err != nil {
			return errorResult(err), nil
		}
		out, text, err := h(ctx, args)
		if err != nil {
			te := classify(ctx, err)
			s.log.Debug("mcp tool failed", "tool", t.Name, "code", te.Code, "err", te.Message)
			return errorResult(te), nil
		}
		if plain {
			s.log.Debug("mcp tool", "tool", t.Name, "took", time.Since(start))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: capResult(text, 0)}}}, nil
		}
		if st, ok := any(&out).(interface{ stamp() }); ok {
			st.stamp()
		}
		data, err := json.Marshal(out)
		if err != nil {
			return errorResult(toolErrorf(CodeInternal, "encoding the result: %v", err)), nil
		}
		s.log.Debug("mcp tool", "tool", t.Name, "took", time.Since(start))
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: capResult(text, len(data))}},
			StructuredContent: json.RawMessage(data),
		}, nil
	})
}

// decodeArguments checks a call's arguments against the input schema and
// decodes them; what does not fit is MCP-INVALID-INPUT, saying why.
func decodeArguments[In any](resolved *jsonschema.Resolved, raw json.RawMessage) (In, error) {
	var in In
	m := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return in, toolErrorf(CodeInvalidInput, "the arguments are not a JSON object (%v): see the tool's input schema", err)
		}
	}
	if err := resolved.Validate(m); err != nil {
		return in, toolErrorf(CodeInvalidInput, "validating the arguments: %v (see the tool's input schema)", err)
	}
	if len(m) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return in, toolErrorf(CodeInvalidInput, "decoding the arguments: %v (see the tool's input schema)", err)
		}
	}
	return in, nil
}

func errorResult(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

// inputSchema is the schema the SDK would infer for In, with each
// property's examples taken from the field's `example` tag.
func inputSchema[In any]() *jsonschema.Schema {
	sch, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema of %T: %v", *new(In), err)) // a programming error, found by every test
	}
	if sch.Properties == nil {
		sch.Properties = map[string]*jsonschema.Schema{}
	}
	typ := reflect.TypeFor[In]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ex, ok := f.Tag.Lookup("example")
		if prop := sch.Properties[name]; ok && prop != nil {
			var v any
			if err := json.Unmarshal([]byte(ex), &v); err != nil {
				panic(fmt.Sprintf("example of %s.%s is not JSON: %v", typ, f.Name, err))
			}
			prop.Examples = []any{v}
		}
	}
	return sch
}

// maxResult bounds a result's size in bytes, its structured content and
// text together: about 25k tokens. Each tool caps how many items it
// lists so that its structured content stays under it.
const maxResult = 100_000

// minText is the least of the text rendering kept however large the
// structured content is.
const minText = 8_000

// capResult cuts the text rendering of a result whose structured
// content takes structured bytes, at a line, to what the budget leaves,
// with a note.
func capResult(text string, structured int) string {
	room := max(maxResult-structured, minText)
	if len(text) <= room {
		return text
	}
	cut := strings.LastIndex(text[:room], "\n")
	if cut < 0 {
		cut = room
	}
	return text[:cut] + "\n... (cut here to stay within the result's size: the structured content has the whole answer; narrow the query for a shorter one)"
}

// recoverPanics turns a panic in any handler into JSON-RPC -32603; the
// server keeps serving.
func (s *Server) recoverPanics(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("mcp: a handler panicked", "method", method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: internal error in %s: %v", CodeInternal, method, v)}
			}
		}()
		return next(ctx, method, req)
	}
}

// tagInputErrors gives a code to the tool errors the SDK makes itself
// (arguments that do not match the schema): every isError result starts
// with an MCP- code.
func tagInputErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && err == nil && r.IsError {
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok && !strings.HasPrefix(t.Text, "MCP-") {
					t.Text = string(CodeInvalidInput) + ": " + t.Text + " (see the tool's input schema)"
				}
			}
		}
		return res, err
	}
}
