package jsonline

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// A line over the limit is reported as too long however many reads it
// takes, keeps none of its bytes but its head, and the next line reads
// whole.
func TestReadLineSkipsALineOverTheLimit(t *testing.T) {
	long := `{"id":1,"method":"m","params":"` + strings.Repeat("x", 100) + `"}` // 9 reads through a 16-byte buffer
	br := bufio.NewReaderSize(strings.NewReader(long+"\n"+`{"ok":1}`+"\n"), 16)
	line, over, err := Read(br, 40)
	if err != nil || line != nil || over == nil {
		t.Fatalf("the long line read as %q, %+v, %v; want it skipped", line, over, err)
	}
	if over.Size != int64(len(long)+1) || string(over.Head) != (long + "\n")[:min(len(long)+1, HeadSize)] {
		t.Errorf("skipped %d bytes with head %q; want %d and the line's start", over.Size, over.Head, len(long)+1)
	}
	if h := Peek(over.Head); string(h.ID) != "1" || h.Method != "m" || h.Response {
		t.Errorf("its head shows %+v", h)
	}
	line, over, err = Read(br, 40)
	if err != nil || over != nil || string(line) != `{"ok":1}` {
		t.Fatalf("the next line read as %q, %+v, %v", line, over, err)
	}
	line, over, err = Read(br, 40)
	if len(line) != 0 || over != nil || err != io.EOF {
		t.Errorf("at the end: %q, %+v, %v; want nothing and EOF", line, over, err)
	}
}

func TestPeek(t *testing.T) {
	for head, want := range map[string]Head{
		`{"jsonrpc":"2.0","id":"a","method":"x","params":{"text":"tru`: {ID: []byte(`"a"`), Method: "x"},
		`{"params":{"text":"tru`:                    {},
		`{"jsonrpc":"2.0","id":3,"result":{"big":"`: {ID: []byte("3"), Response: true},
		`[{"id":1}`: {},
		`not json`:  {},
	} {
		if got := Peek([]byte(head)); string(got.ID) != string(want.ID) || got.Method != want.Method || got.Response != want.Response {
			t.Errorf("Peek(%q) = %+v, want %+v", head, got, want)
		}
	}
}
