package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// FuzzLeanRequest: whatever leanRequest reads, jsonrpc2 reads the same
// way (the same method, id and params), so that the fast path changes
// nothing a handler sees.
func FuzzLeanRequest(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":[1,2.5e3,"x"]}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"text":"é\u00e9\n<&>"}}`,
		` {"method":"m","jsonrpc":"2.0","id":"7","params":null} `,
		`{"jsonrpc":"2.0","id":null,"method":"n"}`,
		`{"jsonrpc":"2.0","id":-1,"method":"n"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"n"}`,
		`{"jsonrpc":"2.0","id":1,"method":"n","id":2}`,
		`{"jsonrpc":"2.0","id":1,"Method":"n"}`,
		`{"jsonrpc":"2.0","id":1,"method":"n","result":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"n"}{}`,
		`{"jsonrpc":"1.0","id":1,"method":"n"}`,
		`{"jsonrpc":"2.0","id":18446744073709551615,"method":"n"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		lean, ok := leanRequest(body)
		if !ok {
			return
		}
		var m anyMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("lean read %q, jsonrpc2 refuses it: %v", body, err)
		}
		want := m.req
		if want == nil {
			t.Fatalf("lean read %q as a request, jsonrpc2 does not", body)
		}
		if lean.Method != want.Method || lean.ID != want.ID || lean.Notif != want.Notif || (lean.Params == nil) != (want.Params == nil) {
			t.Fatalf("%q: lean %+v, jsonrpc2 %+v", body, lean, want)
		}
		if lean.Params != nil && !sameValue(*lean.Params, *want.Params) {
			t.Fatalf("%q: params %s, jsonrpc2 %s", body, *lean.Params, *want.Params)
		}
	})
}

// anyMessage reads what jsonrpc2's read loop reads, through this package's
// decodeMessage (jsonrpc2's message type is unexported).
type anyMessage struct{ req *jsonrpc2.Request }

func (a *anyMessage) UnmarshalJSON(b []byte) error {
	var probe struct {
		Method *string `json:"method"`
	}
	var r jsonrpc2.Request
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	if json.Unmarshal(b, &probe) == nil && probe.Method != nil {
		a.req = &r
	}
	return nil
}

func sameValue(a, b []byte) bool {
	decode := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return nil
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

func TestLeanRequestTakesOnlyTheUsualShape(t *testing.T) {
	for body, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`:             true,
		`{"jsonrpc":"2.0","method":"m"}`:                                true,
		`{"jsonrpc":"2.0","id":"x","method":"m"}`:                       true,
		`{"id":1,"method":"m"}`:                                         false, // no version: jsonrpc2's way
		`{"jsonrpc":"2.0","id":1,"method":"m","extra":true}`:            false,
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                          false,
		`{"jsonrpc":"2.0","id":{},"method":"m"}`:                        false,
		`{"jsonrpc":"2.0","id":1,"method":3}`:                           false,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`:                       false,
		`{"jsonrpc":"2.0","id":1,"method":"m"` + strings.Repeat(" ", 3): false,
	} {
		if _, ok := leanRequest([]byte(body)); ok != want {
			t.Errorf("leanRequest(%s) ok = %v, want %v", body, ok, want)
		}
	}
}
