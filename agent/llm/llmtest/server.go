package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// API names the wire format of a call.
type API string

const (
	APIAnthropic API = "anthropic" // POST /v1/messages
	APIChat      API = "chat"      // POST /v1/chat/completions
	APIResponses API = "responses" // POST /v1/responses
	APIModels    API = "models"    // GET /v1/models
)

// Call is one request the server received. Its fields are set before the
// server answers and never change afterwards.
type Call struct {
	API    API
	Method string
	Path   string
	// Query is the URL's raw query ("api-version=2024-10-21").
	Query  string
	Header http.Header
	// Body is the request body exactly as sent.
	Body []byte
	// Model is the model the request names.
	Model string
	// Stream is set when the request asked for SSE.
	Stream bool
	// Cloud is "bedrock" or "vertex" for Messages requests in those
	// clouds' shapes (the model in the path), else "".
	Cloud string
	// Conversation is the text of the request's first user message.
	Conversation string
	// Step is the conversation's step the call got: the number of
	// assistant turns in the request.
	Step int
	// Attempt counts the calls at this step of this conversation before
	// this one (0 for the first attempt, 1 for the first retry).
	Attempt int
	// Fault is the fault applied to this call, or nil.
	Fault *Fault

	gone chan struct{}
	done chan struct{}
	once sync.Once
}

// Get reads the request body with a gjson path: c.Get("system.0.text"),
// c.Get("tools.#.name"), c.Get("messages.1.content.0.tool_use_id").
func (c *Call) Get(path string) gjson.Result { return gjson.GetBytes(c.Body, path) }

// ClientGone is closed when the server notices that the client went away
// before the answer was complete.
func (c *Call) ClientGone() <-chan struct{} { return c.gone }

// Done is closed when the server has finished with the call.
func (c *Call) Done() <-chan struct{} { return c.done }

func (c *Call) markGone() { c.once.Do(func() { close(c.gone) }) }

// callJSON is how a call is listed by GET /llmtest/calls.
type callJSON struct {
	API          API             `json:"api"`
	Path         string          `json:"path"`
	Header       http.Header     `json:"header"`
	Body         json.RawMessage `json:"body,omitempty"`
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Conversation string          `json:"conversation"`
	Step         int             `json:"step"`
	Attempt      int             `json:"attempt"`
	Fault        *Fault          `json:"fault,omitempty"`
}

// Options configure a Server.
type Options struct {
	// Addr is the address to listen on; empty means 127.0.0.1:0.
	Addr string
	// Logger receives a line per call; nil discards them.
	Logger *slog.Logger
}

// Server is the scripted model server. It is safe for concurrent use.
type Server struct {
	// URL is the server's base URL, "http://127.0.0.1:PORT": the base URL
	// of the Anthropic API. OpenAI-compatible clients use URL + "/v1".
	URL string

	srv  *httptest.Server
	log  *slog.Logger
	quit chan struct{}

	mu       sync.Mutex
	script   Script
	calls    []*Call
	attempts map[attemptKey]int
	closed   bool
}

type attemptKey struct {
	conversation string
	step         int
}

// NewServer starts a server that answers with script.
func NewServer(script Script, opts *Options) (*Server, error) {
	if err := script.validate(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("llmtest: listen: %w", err)
	}
	s := &Server{log: o.Logger, quit: make(chan struct{}), script: script, attempts: map[attemptKey]int{}}
	s.srv = &httptest.Server{
		Listener: ln,
		Config: &http.Server{
			Handler:  http.HandlerFunc(s.serve),
			ErrorLog: log.New(io.Discard, "", 0),
		},
	}
	s.srv.Start()
	s.URL = s.srv.URL
	return s, nil
}

// Start starts a server for a test and closes it when the test ends.
func Start(t testing.TB, script Script) *Server {
	t.Helper()
	s, err := NewServer(script, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// OpenAIURL is the base URL for OpenAI SDKs and compatible clients.
func (s *Server) OpenAIURL() string { return s.URL + "/v1" }

// SetScript replaces the script; calls already answering keep the old one.
func (s *Server) SetScript(script Script) error {
	if err := script.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	s.script = script
	s.mu.Unlock()
	return nil
}

// Calls returns the calls received so far, oldest first.
func (s *Server) Calls() []*Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Call(nil), s.calls...)
}

// ModelCalls returns the calls to the model APIs, leaving out model lists.
func (s *Server) ModelCalls() []*Call {
	var out []*Call
	for _, c := range s.Calls() {
		if c.API != APIModels {
			out = append(out, c)
		}
	}
	return out
}

// Close stops the server. Stalled streams end at once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.quit)
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodGet && path == "/llmtest/calls":
		s.listCalls(w)
		return
	case r.Method == http.MethodPut && path == "/llmtest/script":
		s.putScript(w, r)
		return
	case r.Method == http.MethodGet && (path == "/v1/models" || path == "/models"):
		s.record(&Call{API: APIModels, Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
		s.models(w)
		return
	}
	if s.serveFIM(w, r, path) {
		return
	}
	var api API
	var cloud, cloudModel string
	cloudStream := false
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		api = APIAnthropic
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/model/") &&
		(strings.HasSuffix(path, "/invoke-with-response-stream") || strings.HasSuffix(path, "/invoke")):
		// Amazon Bedrock: /model/{model}/invoke[-with-response-stream].
		api, cloud = APIAnthropic, "bedrock"
		rest := strings.TrimPrefix(path, "/model/")
		cloudModel = rest[:strings.LastIndex(rest, "/")]
		cloudStream = strings.HasSuffix(path, "-stream")
	case r.Method == http.MethodPost && strings.Contains(path, "/publishers/anthropic/models/") &&
		(strings.HasSuffix(path, ":streamRawPredict") || strings.HasSuffix(path, ":rawPredict")):
		// Vertex AI: .../publishers/anthropic/models/{model}:streamRawPredict.
		api, cloud = APIAnthropic, "vertex"
		rest := path[strings.Index(path, "/publishers/anthropic/models/")+len("/publishers/anthropic/models/"):]
		cloudModel = rest[:strings.LastIndex(rest, ":")]
		cloudStream = strings.HasSuffix(path, ":streamRawPredict")
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		api = APIChat
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		api = APIResponses
	default:
		http.Error(w, fmt.Sprintf("llmtest: no endpoint %s %s", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "llmtest: reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	conv, err := parseConversation(api, body)
	if err != nil {
		writeError(w, api, http.StatusBadRequest, "", "llmtest: "+err.Error(), nil)
		return
	}
	if cloud != "" {
		conv.model = cloudModel
		conv.stream = cloudStream
	}
	c := &Call{
		API: api, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body,
		Model: conv.model, Stream: conv.stream, Cloud: cloud, Conversation: conv.firstUser, Step: conv.step,
		gone: make(chan struct{}), done: make(chan struct{}),
	}
	defer close(c.done)

	s.mu.Lock()
	script := s.script
	key := attemptKey{conv.firstUser, conv.step}
	c.Attempt = s.attempts[key]
	s.attempts[key]++
	s.mu.Unlock()

	var step Step
	if script.Reply != nil {
		step = script.Reply(c)
	} else {
		steps := script.steps(conv.firstUser)
		if conv.step >= len(steps) {
			s.record(c)
			writeError(w, api, http.StatusBadRequest, "",
				fmt.Sprintf("llmtest: the script has %d steps for this conversation, and this is call %d (first user message %q)",
					len(steps), conv.step+1, truncate(conv.firstUser, 80)), nil)
			return
		}
		step = steps[conv.step]
	}
	c.Fault = step.fault(c.Attempt)
	s.record(c)
	s.log.Info("llmtest call", "api", api, "step", c.Step, "attempt", c.Attempt, "stream", c.Stream)

	if f := c.Fault; f != nil && f.Kind == FaultStatus {
		h := http.Header{}
		if f.RetryAfter != "" {
			h.Set("Retry-After", f.RetryAfter)
		}
		if f.RetryAfterMs != "" {
			h.Set("Retry-After-Ms", f.RetryAfterMs)
		}
		writeError(w, api, f.Status, f.Type, f.Message, h)
		return
	}
	a := answer{call: c, step: step, conv: conv}
	if !c.Stream || (c.Fault != nil && c.Fault.Kind == FaultNoStream) {
		a.writeJSON(w, r, s.quit)
		return
	}
	out := newSSE(w, r, c, step, s.quit)
	if len(step.Events) > 0 {
		a.streamEvents(out)
		out.end()
		return
	}
	switch api {
	case APIAnthropic:
		a.streamAnthropic(out)
	case APIChat:
		a.streamChat(out)
	case APIResponses:
		a.streamResponses(out)
	}
	out.end()
}

func (s *Server) record(c *Call) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

func (s *Server) listCalls(w http.ResponseWriter) {
	var out []callJSON
	for _, c := range s.Calls() {
		cj := callJSON{API: c.API, Path: c.Path, Header: c.Header, Model: c.Model, Stream: c.Stream,
			Conversation: c.Conversation, Step: c.Step, Attempt: c.Attempt, Fault: c.Fault}
		if json.Valid(c.Body) {
			cj.Body = c.Body
		}
		out = append(out, cj)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func (s *Server) putScript(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		var sc Script
		if sc, err = ParseScript(body); err == nil {
			err = s.SetScript(sc)
		}
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// models answers GET /v1/models in a shape both SDKs read: OpenAI's list
// and Anthropic's page.
func (s *Server) models(w http.ResponseWriter) {
	s.mu.Lock()
	ids := s.script.Models
	s.mu.Unlock()
	if len(ids) == 0 {
		ids = []string{"scripted-model"}
	}
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Type        string `json:"type"`
		Created     int64  `json:"created"`
		CreatedAt   string `json:"created_at"`
		OwnedBy     string `json:"owned_by"`
		DisplayName string `json:"display_name"`
	}
	page := struct {
		Object  string  `json:"object"`
		Data    []model `json:"data"`
		HasMore bool    `json:"has_more"`
		FirstID string  `json:"first_id"`
		LastID  string  `json:"last_id"`
	}{Object: "list", FirstID: ids[0], LastID: ids[len(ids)-1]}
	for _, id := range ids {
		page.Data = append(page.Data, model{ID: id, Object: "model", Type: "model", OwnedBy: "llmtest",
			CreatedAt: time.Unix(0, 0).UTC().Format(time.RFC3339), DisplayName: id})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(page)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
