package lsp

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// jsonrpc2 (sourcegraph's) tells a response from a request by decoding
// the message's whole result into interface{} values, then decodes the
// message again to keep the result as raw JSON: for a workspace symbol
// answer of 25 KB that was most of darman's own time on a warm lookup.
// The client reads each message's bytes itself instead (readMessage),
// keeps a large result of a call it waits for aside, and lets jsonrpc2
// see a message whose result is a small marker string; call decodes the
// kept result once, into its own type (waitedResult).

// keptResultMin is the size of a result worth keeping aside: below it
// jsonrpc2's decoding costs less than looking.
const keptResultMin = 2048

// keptMarker is the result jsonrpc2 sees in place of one kept aside: a
// JSON string no server sends as a result, which call swaps back.
const keptMarker = `"darman: kept result"`

// keptResults are the large results of the calls in flight, by id.
type keptResults struct {
	mu      sync.Mutex
	waiting map[uint64][]byte // nil: no result yet
}

// expect says call id is waited for: its result may be kept.
func (k *keptResults) expect(id uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.waiting == nil {
		k.waiting = map[uint64][]byte{}
	}
	k.waiting[id] = nil
}

// done forgets call id, answered or not.
func (k *keptResults) done(id uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.waiting, id)
}

// keep keeps result for id when a call waits for it.
func (k *keptResults) keep(id uint64, result []byte) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.waiting[id]; !ok {
		return false
	}
	k.waiting[id] = result
	return true
}

// take is id's kept result.
func (k *keptResults) take(id uint64) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	r := k.waiting[id]
	delete(k.waiting, id)
	return r
}

// strip returns msg with its result replaced by keptMarker when msg
// is a response to a call waited for whose result is large, keeping the
// result aside; otherwise msg as it is. Anything it cannot read is left
// to jsonrpc2, which says what is wrong with it.
func (k *keptResults) strip(msg []byte) []byte {
	if len(msg) < keptResultMin || msg[0] != '{' {
		return msg
	}
	dec := jsontext.NewDecoder(bytes.NewReader(msg), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return msg
	}
	var id, result []byte
	var resultAt int64
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return msg
		}
		name := tok.String() // before the next read voids tok
		v, err := dec.ReadValue()
		if err != nil {
			return msg
		}
		switch name {
		case "id":
			id = bytes.Clone(v)
		case "result":
			resultAt = dec.InputOffset() - int64(len(v))
			result = msg[resultAt:dec.InputOffset()]
		case "method":
			return msg // a request: no result
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' || len(result) < keptResultMin {
		return msg
	}
	if _, err := dec.ReadToken(); err != io.EOF { // more after the message
		return msg
	}
	n, err := strconv.ParseUint(string(id), 10, 64)
	if err != nil || !k.keep(n, result) {
		return msg
	}
	out := make([]byte, 0, len(msg)-len(result)+len(keptMarker))
	out = append(out, msg[:resultAt]...)
	out = append(out, keptMarker...)
	return append(out, msg[resultAt+int64(len(result)):]...)
}

// waitedResult decodes a call's result into v: the kept one when
// jsonrpc2 holds keptMarker.
type waitedResult struct {
	k  *keptResults
	id uint64
	v  any
}

func (w waitedResult) UnmarshalJSON(data []byte) error {
	if string(data) == keptMarker {
		if kept := w.k.take(w.id); kept != nil { // else a server's own string
			data = kept
		}
	}
	return json.Unmarshal(data, w.v)
}
