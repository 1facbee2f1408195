package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/darman-dev/darman/internal/lazyre"
)

// node is one value of a parsed layer: an order-preserving JSON tree that
// the decoder checks against the Go types before anything is merged.
type node struct {
	kind   kind
	text   string   // the string's value, or the literal of a number
	fields []member // object members in source order
	items  []*node  // array elements
	bad    bool     // substitution failed; the decoder skips this value
}

type member struct {
	key   string
	value *node
}

type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindObject
	kindArray
)

func stringNode(s string) *node { return &node{kind: kindString, text: s} }

// object builds an object node from key/value pairs, skipping nil values;
// with no values left it returns nil.
func object(members ...member) *node {
	n := &node{kind: kindObject}
	for _, m := range members {
		if m.value != nil {
			n.fields = append(n.fields, m)
		}
	}
	if len(n.fields) == 0 {
		return nil
	}
	return n
}

// describe renders the value for "got ..." in messages.
func (n *node) describe() string {
	switch n.kind {
	case kindString:
		return strconv.Quote(shorten(n.text))
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	default:
		return n.text
	}
}

// rawJSON encodes the value back to standard JSON, keeping object order.
func (n *node) rawJSON() []byte {
	var b bytes.Buffer
	n.writeJSON(&b)
	return b.Bytes()
}

func (n *node) writeJSON(b *bytes.Buffer) {
	switch n.kind {
	case kindString:
		writeString(b, n.text)
	case kindObject:
		b.WriteByte('{')
		for i, m := range n.fields {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.key)
			b.WriteByte(':')
			m.value.writeJSON(b)
		}
		b.WriteByte('}')
	case kindArray:
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.writeJSON(b)
		}
		b.WriteByte(']')
	default:
		b.WriteString(n.text)
	}
}

// writeString writes s as a JSON string, leaving <, > and & as they are
// (the text is shown to people, as in the trust question).
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// syntaxError is a JSONC syntax error at a 1-based line and byte column.
type syntaxError struct {
	line, column int
	msg          string
}

var hujsonPosition = lazyre.New(`(?s)^hujson: line (\d+), column (\d+): (.*)$`)

// parse reads JSON with comments and trailing commas. A document that holds
// only white space and comments is an empty object.
func parse(data []byte) (*node, *syntaxError) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if err := checkDepth(data); err != nil {
		return nil, err
	}
	v, err := hujson.Parse(data)
	if err != nil {
		if onlyComments(data) {
			return &node{kind: kindObject}, nil
		}
		return nil, newSyntaxError(err)
	}
	return convert(v.Value), nil
}

func onlyComments(data []byte) bool {
	probe := append(append([]byte{}, data...), "\n0"...)
	v, err := hujson.Parse(probe)
	return err == nil && v.StartOffset == len(probe)-1
}

func newSyntaxError(err error) *syntaxError {
	e := &syntaxError{line: 1, column: 1, msg: err.Error()}
	if m := hujsonPosition.FindStringSubmatch(err.Error()); m != nil {
		e.line, _ = strconv.Atoi(m[1])
		e.column, _ = strconv.Atoi(m[2])
		e.msg = m[3]
	}
	lit, isLiteral := strings.CutPrefix(e.msg, "invalid literal: ")
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		e.msg = "unexpected end of input (is a closing bracket or quote missing?)"
	case isLiteral && strings.HasPrefix(lit, `"`) && strings.ContainsAny(lit, "\r\n"):
		e.msg = `a string must not span lines (write \n for a line break)`
	case isLiteral && strings.HasPrefix(lit, `"`):
		e.msg = "invalid string " + shorten(lit) + " (check its backslash escapes and control characters)"
	case isLiteral:
		e.msg = "invalid value " + shorten(lit) + ` (strings and keys need "double quotes")`
	}
	// A message is one line.
	e.msg = strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(e.msg)
	return e
}

func shorten(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:37]) + "..."
	}
	return s
}

func convert(v hujson.ValueTrimmed) *node {
	switch v := v.(type) {
	case *hujson.Object:
		n := &node{kind: kindObject, fields: make([]member, 0, len(v.Members))}
		for _, m := range v.Members {
			key := m.Name.Value.(hujson.Literal).String()
			n.fields = append(n.fields, member{key: key, value: convert(m.Value.Value)})
		}
		return n
	case *hujson.Array:
		n := &node{kind: kindArray, items: make([]*node, 0, len(v.Elements))}
		for _, e := range v.Elements {
			n.items = append(n.items, convert(e.Value))
		}
		return n
	case hujson.Literal:
		switch v.Kind() {
		case '"':
			return &node{kind: kindString, text: v.String()}
		case '0':
			return &node{kind: kindNumber, text: string(v)}
		case 't', 'f':
			return &node{kind: kindBool, text: string(v)}
		}
	}
	return &node{kind: kindNull, text: "null"}
}

// maxDepth bounds how deeply arrays and objects may nest. The parser is
// recursive, and a file of a million "[" would otherwise exhaust the stack,
// which Go cannot recover from. Real configurations nest about six deep.
const maxDepth = 64

// checkDepth scans for nesting deeper than maxDepth, skipping strings and
// comments. It only guards the parser: anything else it gets wrong on
// malformed input, the parser reports.
func checkDepth(data []byte) *syntaxError {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case bytes.HasPrefix(data[i:], []byte("//")):
				if n := bytes.IndexByte(data[i:], '\n'); n >= 0 {
					i += n
				} else {
					i = len(data)
				}
			case bytes.HasPrefix(data[i:], []byte("/*")):
				if n := bytes.Index(data[i+2:], []byte("*/")); n >= 0 {
					i += n + 3
				} else {
					i = len(data)
				}
			}
		case '[', '{':
			if depth++; depth > maxDepth {
				line := 1 + bytes.Count(data[:i], []byte("\n"))
				column := i - bytes.LastIndexByte(data[:i], '\n')
				return &syntaxError{line: line, column: column, msg: fmt.Sprintf("nested more than %d levels deep", maxDepth)}
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}
