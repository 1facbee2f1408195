package rpc

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
	line, over, err := readLine(br, 40)
	if err != nil || line != nil || over == nil {
		t.Fatalf("the long line read as %q, %+v, %v; want it skipped", line, over, err)
	}
	if over.size != int64(len(long)+1) || string(over.head) != (long + "\n")[:min(len(long)+1, headSize)] {
		t.Errorf("skipped %d bytes with head %q; want %d and the line's start", over.size, over.head, len(long)+1)
	}
	if id, method, _ := peekHead(over.head); id == nil || id.Num != 1 || method != "m" {
		t.Errorf("its head shows id %v, method %q", id, method)
	}
	line, over, err = readLine(br, 40)
	if err != nil || over != nil || string(line) != `{"ok":1}` {
		t.Fatalf("the next line read as %q, %+v, %v", line, over, err)
	}
	line, over, err = readLine(br, 40)
	if len(line) != 0 || over != nil || err != io.EOF {
		t.Errorf("at the end: %q, %+v, %v; want nothing and EOF", line, over, err)
	}
}
