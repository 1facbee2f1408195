package acpupdate_test

import (
	"encoding/json"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/server/internal/acpupdate"
)

func TestHistoryKind(t *testing.T) {
	call := &agent.ToolCall{CallID: "c1", Name: "read"}
	for _, c := range []struct {
		role agent.Role
		part agent.Part
		want string
	}{
		{agent.RoleUser, agent.Part{Kind: agent.PartText, Text: "fix it"}, acpupdate.UserMessageChunk},
		{agent.RoleUser, agent.Part{Kind: agent.PartText}, acpupdate.UserMessageChunk},
		{agent.RoleAssistant, agent.Part{Kind: agent.PartText, Text: "done"}, acpupdate.AgentMessageChunk},
		{agent.RoleAssistant, agent.Part{Kind: agent.PartText}, ""},
		{agent.RoleAssistant, agent.Part{Kind: agent.PartReasoning, Text: "hmm"}, acpupdate.AgentThoughtChunk},
		{agent.RoleAssistant, agent.Part{Kind: agent.PartReasoning}, ""},
		{agent.RoleAssistant, agent.Part{Kind: agent.PartTool, Tool: call}, acpupdate.ToolCall},
		{agent.RoleAssistant, agent.Part{Kind: agent.PartTool}, ""},
		{agent.RoleAssistant, agent.Part{Kind: agent.PartStepFinish, Usage: &agent.Usage{Input: 1}}, ""},
	} {
		if got := acpupdate.HistoryKind(c.role, c.part); got != c.want {
			t.Errorf("%s %s part %q: %q; want %q", c.role, c.part.Kind, c.part.Text, got, c.want)
		}
	}
}

func TestTool(t *testing.T) {
	f := acpupdate.Tool(&agent.ToolCall{Name: "bash", Status: agent.ToolRunning, Input: json.RawMessage(`{"command": "ls`)})
	if f.Title != "bash" || f.Kind != string(agent.ToolKindOther) || f.Status != "in_progress" || f.RawInput != nil {
		t.Errorf("untitled call with cut-off arguments = %+v; want the name as title, kind other, in_progress, no raw input", f)
	}
	f = acpupdate.Tool(&agent.ToolCall{Name: "edit", Title: "Edit a.go", Kind: agent.ToolKindEdit, Status: agent.ToolFailed, Input: json.RawMessage(`{"path": "a.go"}`)})
	if f.Title != "Edit a.go" || f.Kind != string(agent.ToolKindEdit) || f.Status != "failed" || string(f.RawInput) != `{"path": "a.go"}` {
		t.Errorf("titled edit = %+v", f)
	}
}
