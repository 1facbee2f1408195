package main_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRunElicitationIsAskedInTheTurnsOrder: an MCP server asks for input
// during a tool call of darman run on a terminal. The question is the
// turn's: --format json prints its elicitation event after the call's start and
// its answer before the call's end; the terminal asks it, and what the
// user typed reaches the server, whose result the model reads.
func TestRunElicitationIsAskedInTheTurnsOrder(t *testing.T) {
	e, srv := elicitingEnv(t)
	master := e.onTerminal(t)
	master.WriteString("a\nblue\n")
	out, errs, code := e.run("run", "--format", "json", "pick a colour")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	if !strings.Contains(errs, "the MCP server late asks: Which colour?") {
		t.Errorf("the terminal did not ask the server's question; stderr:\n%s", errs)
	}
	var seen []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l struct {
			Event struct {
				Kind        string
				Tool        *struct{ Name, Status string }
				Elicitation *struct{ Server, Action string }
			}
		}
		json.Unmarshal([]byte(line), &l)
		switch ev := l.Event; {
		case ev.Kind == "elicitation" && ev.Elicitation != nil:
			seen = append(seen, "elicitation "+ev.Elicitation.Server+" "+ev.Elicitation.Action)
		case (ev.Kind == "tool_call" || ev.Kind == "tool_call_update") && ev.Tool != nil && ev.Tool.Name == "late_ask":
			if len(seen) == 0 || seen[len(seen)-1] != ev.Kind+" "+ev.Tool.Status {
				seen = append(seen, ev.Kind+" "+ev.Tool.Status)
			}
		}
	}
	got := strings.Join(seen, ", ")
	asked, answered, ended := strings.Index(got, "elicitation late ,"), strings.Index(got, "elicitation late accept"), strings.Index(got, "tool_call_update completed")
	if started := strings.Index(got, "tool_call"); started < 0 || asked < started || answered < asked || ended < answered {
		t.Errorf("the turn's events were %q; want the call's start, the elicitation asked, answered (accept), then the call's end", got)
	}
	calls := srv.ModelCalls()
	if len(calls) < 2 || !strings.Contains(string(calls[1].Body), `the user said accept {\"colour\":\"blue\"}`) {
		t.Errorf("what the user typed did not reach the server and the model; stderr:\n%s", errs)
	}
}
