package wire

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/tidwall/gjson"
)

// The adapters read the events of a stream themselves. The SDKs darman
// used before decoded an event into their own types by reflection
// (encoding/json scanning it twice more), which cost several times as much
// per streamed chunk as everything else on the path (see "Performance" in
// docs/providers.md). darman needs a handful of fields per event, so it
// validates the event with gjson and picks them out.

// CheckEventStream refuses a successful answer that is not an event
// stream: some compatible servers ignore "stream": true and answer with one
// JSON document, which the SSE decoder would read as an empty stream.
func CheckEventStream(res *http.Response) error {
	ct := res.Header.Get("Content-Type")
	if ct == "" || strings.HasPrefix(strings.ToLower(ct), "text/event-stream") {
		return nil
	}
	head, _ := io.ReadAll(io.LimitReader(res.Body, 200))
	res.Body.Close()
	return &llm.Error{Kind: llm.ErrMalformed, Message: fmt.Sprintf(
		"the server answered with %s instead of an event stream (does it support streaming?): %s", ct, bytes.TrimSpace(head))}
}

// EventJSON reads an event's data as JSON. It reports false for an event
// without data, which the stream skips, and an error for data that is not
// JSON.
func EventJSON(name string, data []byte) (gjson.Result, bool, *llm.Error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return gjson.Result{}, false, nil
	}
	if !gjson.ValidBytes(data) {
		if name == "" {
			name = "an event"
		}
		return gjson.Result{}, false, &llm.Error{Kind: llm.ErrMalformed,
			Message: fmt.Sprintf("%s whose data is not JSON: %.120s", name, data)}
	}
	return gjson.ParseBytes(data), true, nil
}

// TextOf reads a text field that servers send as a string, as null, or as
// a list of text parts; an object (arguments some servers send decoded) is
// kept as its JSON text.
func TextOf(r gjson.Result) string {
	switch {
	case r.Type == gjson.String:
		return r.Str
	case r.IsArray():
		var sb []byte
		r.ForEach(func(_, p gjson.Result) bool {
			sb = append(sb, p.Get("text").String()...)
			return true
		})
		return string(sb)
	case r.IsObject():
		return r.Raw
	}
	return ""
}
