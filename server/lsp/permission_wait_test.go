package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// While a question waits, darman writes a log line every second for Emacs
// (its jsonrpc needs the input), not for VS Code, whose output channel
// would show it once a second.
func TestWaitingLogLineOnlyForClientsThatNeedIt(t *testing.T) {
	for _, c := range []struct {
		client string
		want   bool
	}{{"Visual Studio Code", false}, {"code-server", false}, {"Emacs", true}} {
		t.Run(c.client, func(t *testing.T) {
			e := start(t, options{
				script:     writeScript("notes.txt", "new\n"),
				clientInfo: c.client,
				optIns:     map[string]bool{"sessionUpdates": true, "requestPermission": true},
				answer: func(method string, params json.RawMessage) (any, error) {
					if method != "darman/requestPermission" {
						return defaultAnswer(method, params)
					}
					time.Sleep(2500 * time.Millisecond)
					return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
				},
			})
			e.write("notes.txt", "old\n")
			e.prompt("rewrite notes.txt")
			e.client.Await(0, "the end", isState("idle"))
			n := 0
			for _, m := range e.client.Since(0) {
				if m.Method == "window/logMessage" && strings.Contains(string(m.Params), "waiting for the editor to answer") {
					n++
				}
			}
			if got := n > 0; got != c.want {
				t.Errorf("%s got %d 'waiting for the editor' lines over a 2.5 s question; want some: %v", c.client, n, c.want)
			}
		})
	}
}
