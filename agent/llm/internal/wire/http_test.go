package wire

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestOpenAIRedirectDropsKeys(t *testing.T) {
	var got http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data": [{"id": "m1"}]}`)
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 127.0.0.1 and localhost are different hosts to the client.
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/models", http.StatusFound)
	}))
	defer first.Close()
	c := APIClient{Transport: Transport{BaseURL: first.URL, Key: "sk-bearer", Headers: map[string]string{"X-Team": "core"}, HTTP: http.DefaultClient},
		Header: map[string]string{"api-key": "azure-key"}}
	ids, err := c.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != "m1" {
		t.Errorf("models %v", ids)
	}
	for _, h := range []string{"Api-Key", "Authorization", "X-Team"} {
		if v := got.Get(h); v != "" {
			t.Errorf("%s %q went to the other host", h, v)
		}
	}
}

// The decoder frames events as the SSE specification says: data lines
// joined, comments and unknown fields skipped, an unfinished event at the
// end dropped.
func TestSSEDecoder(t *testing.T) {
	body := ": keep-alive\n\nevent: a\ndata: {\"x\":\ndata:1}\nid: 7\n\ndata: [DONE]\n\ndata: cut"
	d := NewSSEDecoder(io.NopCloser(strings.NewReader(body)))
	var got []SSEEvent
	for d.Next() {
		got = append(got, d.Event())
	}
	want := []SSEEvent{{Type: "a", Data: []byte("{\"x\":\n1}\n")}, {Data: []byte("[DONE]\n")}}
	if !reflect.DeepEqual(got, want) || d.Err() != nil {
		t.Errorf("events %q, err %v; want %q", got, d.Err(), want)
	}
	long := "data: " + strings.Repeat("x", 40<<20) + "\n\n"
	d = NewSSEDecoder(io.NopCloser(strings.NewReader(long)))
	if d.Next() || !errors.Is(d.Err(), bufio.ErrTooLong) {
		t.Errorf("a 40 MiB event: err %v", d.Err())
	}
}
