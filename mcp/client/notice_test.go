package client_test

import (
	"testing"

	"github.com/darman-dev/darman/mcp/client"
)

func TestNoticeWording(t *testing.T) {
	for _, tc := range []struct {
		s           client.Status
		level, text string
	}{
		{client.Status{Name: "gh", State: client.StateReady, Protocol: "2025-11-25", Tools: 3, Generation: 2}, "info", "mcp server gh is ready: protocol 2025-11-25, 3 tools (catalog 2)"},
		{client.Status{Name: "db", State: client.StateFailed, Required: true, Failure: &client.Failure{Class: client.FailureNotFound, Message: `command "pg-mcp" not found`}}, "error", `mcp server db failed: not found: command "pg-mcp" not found`},
		{client.Status{Name: "web", State: client.StateFailed, Failure: &client.Failure{Class: client.FailureCrashed, Message: "exit status 1"}}, "warning", "mcp server web failed: crashed: exit status 1"},
		{client.Status{Name: "old", State: client.StateRetiring}, "info", "mcp server old is retiring: it finishes the calls in flight, then stops"},
	} {
		if level, text := tc.s.Notice(); level != tc.level || text != tc.text {
			t.Errorf("Notice(%s) = %s %q; want %s %q", tc.s.State, level, text, tc.level, tc.text)
		}
	}
}
