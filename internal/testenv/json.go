package testenv

import (
	"encoding/json"
	"reflect"
	"testing"
)

// SameJSON fails t unless got and want are the same JSON value, whatever
// their key order and spacing; what names the body in the message.
func SameJSON(t testing.TB, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v: %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the expected body: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s body\n got %s\nwant %s", what, got, want)
	}
}
