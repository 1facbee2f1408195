package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/tidwall/gjson"
)

// darman speaks OpenAI's HTTP API (Chat Completions, Responses, the legacy
// completions and the models list) with its own small client instead of
// the openai-go SDK. The SDK cost 8 MB of the binary and 1.6 ms of every
// start (its package initializers register hundreds of union types), for
// four endpoints whose requests darman builds from a few structs and
// whose streams it already read itself (see sse.go). Retries, timeouts
// and the mapping of errors were darman's with the SDK too (it ran with
// no retries of its own).

// APIClient sends requests to one model server: an OpenAI-compatible one,
// or Anthropic's (also on Bedrock and Vertex), whose error bodies carry
// the same {"error": {"type", "message"}} object.
type APIClient struct {
	Transport Transport
	// Header and Query are added to every request after the transport's
	// (Azure's api-key and api-version).
	Header map[string]string
	Query  url.Values
	// Sign, when set, authorises each request last, with its final
	// headers and body (Bedrock's SigV4, Vertex's access token).
	Sign func(req *http.Request, body []byte) error
}

// StatusError is an error status from a model server,
// with the fields of the body's {"error": {...}} object where it has one.
type StatusError struct {
	Status              int
	Code, Type, Message string
	// Body is the response body (its first MiB).
	Body   string
	URL    string
	Header http.Header
}

func (e *StatusError) Error() string {
	if text := http.StatusText(e.Status); text != "" {
		return fmt.Sprintf("API error: %d %s", e.Status, text)
	}
	return fmt.Sprintf("API error: %d", e.Status)
}

// EncodeJSON encodes v as the body of a request, HTML characters as they
// are (encoding/json would escape every < and & of the prompt).
func EncodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Do sends one request; path is relative to the base URL.
func (c *APIClient) Do(ctx context.Context, method, path string, body []byte, stream bool) (*http.Response, error) {
	return c.DoURL(ctx, method, c.Transport.BaseURL+"/"+strings.TrimPrefix(path, "/"), body, stream)
}

// DoURL sends one request to u. A status other than 2xx (redirects are
// followed before) is returned as an *apiStatusError with the body read
// and closed.
func (c *APIClient) DoURL(ctx context.Context, method, u string, body []byte, stream bool) (*http.Response, error) {
	if len(c.Query) > 0 {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		u += sep + c.Query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	req.Header.Set("User-Agent", "darman")
	if c.Transport.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Transport.Key)
	}
	for k, v := range c.Transport.Headers {
		req.Header.Set(k, v)
	}
	for k, v := range c.Header {
		req.Header.Set(k, v)
	}
	if c.Sign != nil {
		if err := c.Sign(req, body); err != nil {
			return nil, err
		}
	}
	res, err := c.Transport.Idle.Do(req, c.client().Do)
	if err != nil {
		return nil, err
	}
	if res.StatusCode < 300 {
		return res, nil
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	e := &StatusError{Status: res.StatusCode, Body: string(raw), URL: req.URL.String(), Header: res.Header}
	if obj := gjson.GetBytes(raw, "error"); obj.IsObject() {
		e.Code = JSONText(obj.Get("code"))
		e.Type = JSONText(obj.Get("type"))
		e.Message = JSONText(obj.Get("message"))
	}
	return nil, e
}

// client is the transport's HTTP client, which on a redirect to another
// host drops the headers that carry the key: Go drops Authorization by
// itself, not Azure's api-key or a configured header.
func (c *APIClient) client() *http.Client {
	hc := http.Client{}
	if c.Transport.HTTP != nil {
		hc = *c.Transport.HTTP
	}
	next := hc.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && req.URL.Host != via[0].URL.Host {
			for k := range c.Header {
				req.Header.Del(k)
			}
			for k := range c.Transport.Headers {
				req.Header.Del(k)
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &hc
}

// JSONText is a string field of an error object; servers send some as
// numbers or null.
func JSONText(r gjson.Result) string {
	if r.Type == gjson.Null {
		return ""
	}
	return r.String()
}

// Stream posts a streamed request (the body gets "stream": true from its
// params) and returns the decoder of its event stream.
func (c *APIClient) Stream(ctx context.Context, path string, params any) (*SSEDecoder, error) {
	body, err := EncodeJSON(params)
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: "encoding the request: " + err.Error()}
	}
	return c.StreamBody(ctx, path, body)
}

func (c *APIClient) StreamBody(ctx context.Context, path string, body []byte) (*SSEDecoder, error) {
	res, err := c.Do(ctx, http.MethodPost, path, body, true)
	if err != nil {
		return nil, err
	}
	if err := CheckEventStream(res); err != nil {
		return nil, err
	}
	return NewSSEDecoder(res.Body), nil
}

// Models lists the models of the server (GET models).
func (c *APIClient) Models(ctx context.Context) ([]string, error) {
	return c.ModelList(ctx, "models")
}

// ModelList reads the ids of a models list at path ({"data": [{"id"}]}).
func (c *APIClient) ModelList(ctx context.Context, path string) ([]string, error) {
	res, err := c.Do(ctx, http.MethodGet, path, nil, false)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil {
		return nil, fmt.Errorf("reading the models list: %w", err)
	}
	ids := make([]string, len(page.Data))
	for i, m := range page.Data {
		ids[i] = m.ID
	}
	return ids, nil
}

// SSEEvent is one server-sent event: its name and its data lines, each
// followed by a newline.
type SSEEvent struct {
	Type string
	Data []byte
}

// SSEDecoder frames a text/event-stream body into events.
type SSEDecoder struct {
	rc  io.ReadCloser
	scn *bufio.Scanner
	evt SSEEvent
	err error
}

func NewSSEDecoder(rc io.ReadCloser) *SSEDecoder {
	scn := bufio.NewScanner(rc)
	// Events of 32 MiB at most (a tool call's arguments arrive in one
	// event from some servers).
	scn.Buffer(nil, 32<<20)
	return &SSEDecoder{rc: rc, scn: scn}
}

// Next reads the next event; false at the end of the body or on a read
// error (Err). An event not ended by a blank line is dropped.
func (d *SSEDecoder) Next() bool {
	if d.err != nil {
		return false
	}
	name := ""
	var data []byte
	for d.scn.Scan() {
		line := d.scn.Bytes()
		if len(line) == 0 {
			if len(data) == 0 {
				name = ""
				continue
			}
			d.evt = SSEEvent{Type: name, Data: data}
			return true
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			data = append(data, value...)
			data = append(data, '\n')
		}
	}
	d.err = d.scn.Err()
	return false
}

func (d *SSEDecoder) Event() SSEEvent { return d.evt }
func (d *SSEDecoder) Err() error      { return d.err }
func (d *SSEDecoder) Close() error    { return d.rc.Close() }
