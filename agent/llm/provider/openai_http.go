package provider

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

// apiClient sends requests to one model server: an OpenAI-compatible one,
// or Anthropic's (anthropic.go, cloud.go), whose error bodies carry the same
// {"error": {"type", "message"}} object.
type apiClient struct {
	t transport
	// header and query are added to every request after the transport's
	// (Azure's api-key and api-version).
	header map[string]string
	query  url.Values
	// sign, when set, authorises each request last, with its final
	// headers and body (Bedrock's SigV4, Vertex's access token).
	sign func(req *http.Request, body []byte) error
}

// apiStatusError is an error status from a model server,
// with the fields of the body's {"error": {...}} object where it has one.
type apiStatusError struct {
	Status              int
	Code, Type, Message string
	// Body is the response body (its first MiB).
	Body   string
	URL    string
	Header http.Header
}

func (e *apiStatusError) Error() string {
	if text := http.StatusText(e.Status); text != "" {
		return fmt.Sprintf("API error: %d %s", e.Status, text)
	}
	return fmt.Sprintf("API error: %d", e.Status)
}

// encodeJSON encodes v as the body of a request, HTML characters as they
// are (encoding/json would escape every < and & of the prompt).
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// do sends one request; path is relative to the base URL.
func (c *apiClient) do(ctx context.Context, method, path string, body []byte, stream bool) (*http.Response, error) {
	return c.doURL(ctx, method, c.t.baseURL+"/"+strings.TrimPrefix(path, "/"), body, stream)
}

// doURL sends one request to u. A status other than 2xx (redirects are
// followed before) is returned as an *apiStatusError with the body read
// and closed.
func (c *apiClient) doURL(ctx context.Context, method, u string, body []byte, stream bool) (*http.Response, error) {
	if len(c.query) > 0 {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		u += sep + c.query.Encode()
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
	if c.t.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.t.key)
	}
	for k, v := range c.t.headers {
		req.Header.Set(k, v)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	if c.sign != nil {
		if err := c.sign(req, body); err != nil {
			return nil, err
		}
	}
	res, err := c.t.idle.do(req, c.client().Do)
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
	e := &apiStatusError{Status: res.StatusCode, Body: string(raw), URL: req.URL.String(), Header: res.Header}
	if obj := gjson.GetBytes(raw, "error"); obj.IsObject() {
		e.Code = jsonText(obj.Get("code"))
		e.Type = jsonText(obj.Get("type"))
		e.Message = jsonText(obj.Get("message"))
	}
	return nil, e
}

// client is the transport's HTTP client, which on a redirect to another
// host drops the headers that carry the key: Go drops Authorization by
// itself, not Azure's api-key or a configured header.
func (c *apiClient) client() *http.Client {
	hc := http.Client{}
	if c.t.http != nil {
		hc = *c.t.http
	}
	next := hc.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && req.URL.Host != via[0].URL.Host {
			for k := range c.header {
				req.Header.Del(k)
			}
			for k := range c.t.headers {
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

// jsonText is a string field of an error object; servers send some as
// numbers or null.
func jsonText(r gjson.Result) string {
	if r.Type == gjson.Null {
		return ""
	}
	return r.String()
}

// stream posts a streamed request (the body gets "stream": true from its
// params) and returns the decoder of its event stream.
func (c *apiClient) stream(ctx context.Context, path string, params any) (*sseDecoder, error) {
	body, err := encodeJSON(params)
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: "encoding the request: " + err.Error()}
	}
	return c.streamBody(ctx, path, body)
}

func (c *apiClient) streamBody(ctx context.Context, path string, body []byte) (*sseDecoder, error) {
	res, err := c.do(ctx, http.MethodPost, path, body, true)
	if err != nil {
		return nil, err
	}
	if err := checkEventStream(res); err != nil {
		return nil, err
	}
	return newSSEDecoder(res.Body), nil
}

// models lists the models of the server (GET models).
func (c *apiClient) models(ctx context.Context) ([]string, error) {
	return c.modelList(ctx, "models")
}

// modelList reads the ids of a models list at path ({"data": [{"id"}]}).
func (c *apiClient) modelList(ctx context.Context, path string) ([]string, error) {
	res, err := c.do(ctx, http.MethodGet, path, nil, false)
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

// sseEvent is one server-sent event: its name and its data lines, each
// followed by a newline.
type sseEvent struct {
	Type string
	Data []byte
}

// sseDecoder frames a text/event-stream body into events.
type sseDecoder struct {
	rc  io.ReadCloser
	scn *bufio.Scanner
	evt sseEvent
	err error
}

func newSSEDecoder(rc io.ReadCloser) *sseDecoder {
	scn := bufio.NewScanner(rc)
	// Events of 32 MiB at most (a tool call's arguments arrive in one
	// event from some servers).
	scn.Buffer(nil, 32<<20)
	return &sseDecoder{rc: rc, scn: scn}
}

// Next reads the next event; false at the end of the body or on a read
// error (Err). An event not ended by a blank line is dropped.
func (d *sseDecoder) Next() bool {
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
			d.evt = sseEvent{Type: name, Data: data}
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

func (d *sseDecoder) Event() sseEvent { return d.evt }
func (d *sseDecoder) Err() error      { return d.err }
func (d *sseDecoder) Close() error    { return d.rc.Close() }
