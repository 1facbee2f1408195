package openai

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/internal/wire"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// chatReasoningPatch is a field to set on one message of the request body.
type chatReasoningPatch struct {
	message int
	// field is the path below the message: "reasoning_content",
	// "tool_calls.0.extra_content".
	field string
	// raw is the field's JSON value.
	raw []byte
}

// toolCallExtraPatches give each tool call its extra_content back:
// Gemini's thought signatures (ai.google.dev/gemini-api/docs/thought-signatures:
// Gemini 3 answers 4xx to function calls sent back without theirs; on the
// OpenAI-compatible API they travel as tool_calls[i].extra_content).
func toolCallExtraPatches(req *llm.Request, index []int) []chatReasoningPatch {
	var out []chatReasoningPatch
	for i, m := range req.Messages {
		if m.Role != llm.RoleAssistant || index[i] < 0 {
			continue
		}
		n := 0
		for _, p := range m.Parts {
			c, ok := p.(llm.ToolCall)
			if !ok {
				continue
			}
			if c.Extra != "" && gjson.Valid(c.Extra) {
				out = append(out, chatReasoningPatch{message: index[i], field: "tool_calls." + strconv.Itoa(n) + ".extra_content", raw: []byte(c.Extra)})
			}
			n++
		}
	}
	return out
}

// chatReasoningPatches works out what each assistant message of the
// request carries back. index maps req.Messages to the indexes of their
// messages in the body (-1 for one that produced none).
func chatReasoningPatches(rule llm.ReasoningReturn, req *llm.Request, index []int) []chatReasoningPatch {
	if rule.Field == "" || rule.Field == llm.ReturnNone {
		return nil
	}
	lastUser := -1
	for i, m := range req.Messages {
		if m.Role == llm.RoleUser {
			lastUser = i
		}
	}
	var out []chatReasoningPatch
	for i, m := range req.Messages {
		if m.Role != llm.RoleAssistant || index[i] < 0 {
			continue
		}
		var text strings.Builder
		var details []string
		calls, found := false, false
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llm.Reasoning:
				if p.Origin != llm.OriginChat {
					continue
				}
				found = true
				text.WriteString(p.Text)
				if p.Details != "" {
					details = append(details, p.Details)
				}
			case llm.ToolCall:
				calls = true
			}
		}
		if rule.Field == llm.ReturnReasoningDetails {
			if raw := joinDetails(details); raw != nil {
				out = append(out, chatReasoningPatch{message: index[i], field: "reasoning_details", raw: raw})
			}
			continue
		}
		switch rule.Turns {
		case llm.TurnsToolCalls:
			if !calls {
				continue
			}
		case llm.TurnsCurrent:
			if i < lastUser || !found {
				continue
			}
		default:
			if !found {
				continue
			}
		}
		out = append(out, chatReasoningPatch{message: index[i], field: rule.Field, raw: jsonString(text.String())})
	}
	return out
}

// joinDetails joins the reasoning_details arrays of a message's reasoning
// parts. One array, the usual case, is returned as it is, byte for byte.
func joinDetails(arrays []string) []byte {
	switch len(arrays) {
	case 0:
		return nil
	case 1:
		return []byte(arrays[0])
	}
	out := []byte{'['}
	for _, a := range arrays {
		inner := bytes.TrimSpace([]byte(a))
		inner = bytes.TrimSuffix(bytes.TrimPrefix(inner, []byte("[")), []byte("]"))
		inner = bytes.TrimSpace(inner)
		if len(inner) == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, inner...)
	}
	return append(out, ']')
}

// jsonString encodes s as a JSON string without the HTML escaping of
// json.Marshal, so the text goes back as the server sent it.
func jsonString(s string) []byte {
	b, _ := wire.EncodeJSON(s) // a string always encodes
	return b
}

// applyPatches sets the fields on the encoded request. The values go in as
// raw JSON: the SDK's extra fields would be re-encoded with HTML escaping,
// which changes the bytes of reasoning_details that OpenRouter wants back
// unchanged.
func applyPatches(body []byte, patches []chatReasoningPatch) ([]byte, error) {
	var err error
	for _, p := range patches {
		body, err = sjson.SetRawBytes(body, "messages."+strconv.Itoa(p.message)+"."+p.field, p.raw)
		if err != nil {
			return nil, fmt.Errorf("llm: adding %s to message %d: %w", p.field, p.message, err)
		}
	}
	return body, nil
}

// rawBody is a request body already encoded; the SDK sends it as it is.
type rawBody []byte

func (b rawBody) MarshalJSON() ([]byte, error) { return b, nil }

// detailsAccumulator joins the fragments of OpenRouter's streamed
// reasoning_details into whole entries. Fragments of one entry share an
// index; their text, summary, data and signature pieces are concatenated,
// and the other fields keep the first value sent (a later one replaces a
// null or empty one). Keys stay in the order they first appeared, so the
// entries are written the way the server wrote them.
type detailsAccumulator struct {
	entries []*detailEntry
	byIndex map[int64]*detailEntry
}

type detailEntry struct {
	keys   []string
	values map[string][]byte // raw JSON, or the joined string for text fields
	text   map[string]*strings.Builder
}

// detailTextFields are the fields streamed in pieces.
var detailTextFields = map[string]bool{"text": true, "summary": true, "data": true, "signature": true}

func (a *detailsAccumulator) add(arr gjson.Result) {
	arr.ForEach(func(_, d gjson.Result) bool {
		if !d.IsObject() {
			return true
		}
		idx := int64(len(a.entries))
		if i := d.Get("index"); i.Exists() {
			idx = i.Int()
		}
		if a.byIndex == nil {
			a.byIndex = map[int64]*detailEntry{}
		}
		e := a.byIndex[idx]
		if e == nil {
			e = &detailEntry{values: map[string][]byte{}, text: map[string]*strings.Builder{}}
			a.byIndex[idx] = e
			a.entries = append(a.entries, e)
		}
		d.ForEach(func(k, v gjson.Result) bool {
			key := k.String()
			_, seenText := e.text[key]
			_, seenValue := e.values[key]
			if !seenText && !seenValue {
				e.keys = append(e.keys, key)
			}
			if detailTextFields[key] && (v.Type == gjson.String || v.Type == gjson.Null) {
				b := e.text[key]
				if b == nil {
					b = &strings.Builder{}
					e.text[key] = b
				}
				b.WriteString(v.Str)
				if v.Type == gjson.Null && b.Len() == 0 {
					e.values[key] = []byte("null")
				} else {
					delete(e.values, key)
				}
				return true
			}
			old, ok := e.values[key]
			if !ok || string(old) == "null" || string(old) == `""` {
				e.values[key] = []byte(v.Raw)
			}
			return true
		})
		return true
	})
}

// take returns the entries gathered so far as a JSON array, and forgets
// them; "" when there are none.
func (a *detailsAccumulator) take() string {
	if len(a.entries) == 0 {
		return ""
	}
	var b []byte
	b = append(b, '[')
	for i, e := range a.entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for j, k := range e.keys {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, jsonString(k)...)
			b = append(b, ':')
			if t, ok := e.text[k]; ok && e.values[k] == nil {
				b = append(b, jsonString(t.String())...)
			} else {
				b = append(b, e.values[k]...)
			}
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	a.entries, a.byIndex = nil, nil
	return string(b)
}
