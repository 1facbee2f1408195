package anthropic

import (
	"bytes"
	"encoding/json"
)

// anthropicContent is one content block of a Messages request.
type anthropicContent struct {
	// typ is "text", "image", "thinking", "redacted_thinking", "tool_use"
	// or "tool_result".
	typ string
	// text is a text block's text or a thinking block's thinking.
	text string
	// data is an image's base64 bytes or a redacted thinking block's data.
	data, mediaType, signature string
	// id is a tool call's id or the one a tool result answers.
	id, name string
	// input is a tool call's arguments, a JSON object sent as it is.
	input   []byte
	isError bool
	// content is a tool result's text and images.
	content []anthropicContent
	// cache marks a cache breakpoint at the block; nil for none.
	cache *anthropicCache
}

// cacheable reports whether the API takes a cache_control on the block
// (thinking blocks have none).
func (c *anthropicContent) cacheable() bool {
	return c.typ != "thinking" && c.typ != "redacted_thinking"
}

func (c *anthropicContent) write(w *jsonWriter) {
	switch c.typ {
	case "text":
		w.b.WriteString(`{"text":`)
		w.value(c.text)
	case "image":
		w.b.WriteString(`{"source":{"data":`)
		w.value(c.data)
		w.field("media_type")
		w.value(c.mediaType)
		w.b.WriteString(`,"type":"base64"}`)
	case "thinking":
		w.b.WriteString(`{"signature":`)
		w.value(c.signature)
		w.field("thinking")
		w.value(c.text)
	case "redacted_thinking":
		w.b.WriteString(`{"data":`)
		w.value(c.data)
	case "tool_use":
		w.b.WriteString(`{"id":`)
		w.value(c.id)
		w.b.WriteString(`,"input":`)
		w.b.Write(c.input)
		w.field("name")
		w.value(c.name)
	case "tool_result":
		w.b.WriteString(`{"tool_use_id":`)
		w.value(c.id)
		if c.isError {
			w.b.WriteString(`,"is_error":true`)
		}
		w.b.WriteString(`,"content":[`)
		for i := range c.content {
			if i > 0 {
				w.b.WriteByte(',')
			}
			c.content[i].write(w)
		}
		w.b.WriteByte(']')
	}
	if c.cache != nil {
		c.cache.write(w)
	}
	w.field("type")
	w.value(c.typ)
	w.b.WriteByte('}')
}

// anthropicCache is a cache_control marker: five minutes, or an hour.
type anthropicCache struct {
	long bool
}

func (c *anthropicCache) write(w *jsonWriter) {
	if c.long {
		w.b.WriteString(`,"cache_control":{"ttl":"1h","type":"ephemeral"}`)
		return
	}
	w.b.WriteString(`,"cache_control":{"type":"ephemeral"}`)
}

// jsonWriter writes a request body by hand where it holds JSON that must
// go out as it is: encoding/json compacts a json.RawMessage and the output
// of every Marshaler, which would change the bytes of a tool call's
// arguments that prompt caches key on. Values are encoded by encoding/json
// without HTML escaping (it would turn every < and & of a prompt into
// \u003c and \u0026).
type jsonWriter struct {
	b   bytes.Buffer
	enc *json.Encoder
	// err is the first error of an encoded value.
	err error
}

func newJSONWriter() *jsonWriter {
	w := &jsonWriter{}
	w.enc = json.NewEncoder(&w.b)
	w.enc.SetEscapeHTML(false)
	return w
}

// field writes a comma and the name of an object's field.
func (w *jsonWriter) field(name string) {
	w.b.WriteString(`,"`)
	w.b.WriteString(name)
	w.b.WriteString(`":`)
}

// value writes v as JSON.
func (w *jsonWriter) value(v any) {
	if err := w.enc.Encode(v); err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	// Encode ends every value with a newline.
	w.b.Truncate(w.b.Len() - 1)
}
