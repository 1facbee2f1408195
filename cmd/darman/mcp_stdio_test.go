package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMCPStdioAnswersGarbageAndLivesOn sends `darman mcp` lines the SDK's
// stdio cannot decode (and once ended the server on): each gets its
// JSON-RPC error answer, and the requests around them are answered as
// usual, the one right after a truncated object included.
func TestMCPStdioAnswersGarbageAndLivesOn(t *testing.T) {
	e := newEnv(t)
	e.write("go.mod", "module example.com/m\n\ngo 1.22\n")
	cmd := exec.Command(darmanBin, "mcp")
	cmd.Dir = e.workspace
	cmd.Env = e.vars
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	type answer struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	answers := make(chan answer, 100)
	go func() {
		defer close(answers)
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			var a answer
			if err := json.Unmarshal(line, &a); err != nil {
				t.Errorf("darman mcp wrote a line that is not JSON: %q", line)
				return
			}
			answers <- a
		}
	}()
	next := func(what string) answer {
		t.Helper()
		select {
		case a, ok := <-answers:
			if !ok {
				t.Fatalf("darman mcp ended before %s; stderr:\n%s", what, stderr.String())
			}
			return a
		case <-time.After(time.Minute):
			t.Fatalf("no answer for %s; stderr:\n%s", what, stderr.String())
		}
		return answer{}
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("darman mcp stopped reading: %v; stderr:\n%s", err, stderr.String())
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"garbage","version":"1"}}}`)
	if a := next("initialize"); string(a.ID) != "1" || a.Error != nil {
		t.Fatalf("initialize: %+v", a)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// Each bad line, in turn; the answer comes before the next line is
	// read, so the order is the order sent.
	for _, tc := range []struct {
		name, line string
		id         string
		code       int64
		text       string
	}{
		{"not JSON", "this is not json", "null", -32700, "not JSON"},
		{"nested deeper than the SDK decodes", strings.Repeat("[", 2000) + strings.Repeat("]", 2000), "null", -32600, "batches"},
		{"an object nested too deep", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":` + strings.Repeat(`{"a":`, 2000) + "1" + strings.Repeat("}", 2000) + "}", "2", -32700, "nesting depth"},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, "null", -32600, "not a JSON-RPC 2.0 message"},
		{"a batch", `[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`, "null", -32600, "batches"},
		{"no version", `{"id":4,"method":"tools/list"}`, "4", -32600, "version"},
		{"over the line limit", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"text":"` + strings.Repeat("a", 17<<20) + `"}}`, "5", -32600, "(tools/call) has 17825860 bytes, over the limit of 16 MiB"},
		{"a truncated object", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{`, "null", -32700, "not JSON"},
	} {
		send(tc.line)
		a := next(tc.name)
		if a.Error == nil || string(a.ID) != tc.id || a.Error.Code != tc.code || !strings.Contains(a.Error.Message, tc.text) {
			t.Errorf("%s: got id %s, %+v; want id %s, code %d mentioning %q", tc.name, a.ID, a.Error, tc.id, tc.code, tc.text)
		}
	}
	// The request right after the truncated object is its own.
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	a := next("tools/list")
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if string(a.ID) != "7" || a.Error != nil || json.Unmarshal(a.Result, &tools) != nil || len(tools.Tools) != 12 {
		t.Fatalf("tools/list after the bad lines: id %s, error %+v, %d tools", a.ID, a.Error, len(tools.Tools))
	}
	names := make([]string, 0, len(tools.Tools))
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "diagnostics") {
		t.Errorf("tools: %v", names)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("darman mcp at the end of input: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("darman mcp did not exit at the end of its input")
	}
	if strings.Contains(stderr.String(), "panic") {
		t.Errorf("stderr: %s", stderr.String())
	}
}
