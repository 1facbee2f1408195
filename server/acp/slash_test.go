package acp_test

import (
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// TestBuiltinCommandsAndTypedText: darman's built-in commands run from
// session/prompt as in the other fronts, without a model call of theirs
// (/help lists the workspace's commands, a command file of the same name
// is offered in a new session without restarting), and a command's
// message replays as typed while the model was sent the expansion.
func TestBuiltinCommandsAndTypedText(t *testing.T) {
	script := llmtest.Script{Steps: []llmtest.Step{{Text: "Reviewed."}, {Text: "Nothing before."}}}
	first := start(t, options{script: script, files: map[string]string{".darman/command/review.md": "---\ndescription: Review a file\n---\nReview $ARGUMENTS for bugs."}})
	id := first.newSession()
	from := first.client.Count()
	if stop := first.prompt(id, "/help"); stop != "end_turn" {
		t.Fatalf("/help stopped with %q", stop)
	}
	if got := first.client.text(from); !strings.Contains(got, "/review — Review a file") || !strings.Contains(got, "/compact") {
		t.Errorf("/help answered %q", got)
	}
	if n := len(first.model.ModelCalls()); n != 0 {
		t.Fatalf("/help called the model %d times", n)
	}
	first.prompt(id, "/review main.go")
	if body := string(first.model.ModelCalls()[0].Body); !strings.Contains(body, "Review main.go for bugs.") {
		t.Errorf("the model was not sent the expansion: %.2000s", body)
	}
	first.prompt(id, "/clear")
	first.prompt(id, "what did I ask?")
	if body := string(first.model.ModelCalls()[1].Body); strings.Contains(body, "Review main.go") {
		t.Errorf("after /clear the model was sent the conversation before it: %.2000s", body)
	}
	// A command file written while darman runs is a command at once.
	first.write(".darman/command/late.md", "Late $ARGUMENTS.")
	from = first.client.Count()
	late := first.newSession()
	first.client.Await(from, "the new command offered", func(n note) bool {
		return strings.Contains(string(n.Params), late) && strings.Contains(string(n.Params), `"name":"late"`)
	})
	first.stop()

	second := start(t, options{script: script, root: first.root, data: first.data})
	second.client.MustCall("session/load", map[string]any{"sessionId": id, "cwd": first.root, "mcpServers": []any{}}, nil)
	var users []string
	for _, u := range second.client.updates(0, "user_message_chunk") {
		users = append(users, u["content"].(map[string]any)["text"].(string))
	}
	if strings.Join(users, "|") != "/review main.go|what did I ask?" {
		t.Errorf("session/load replays the user's messages as %q, want what was typed", users)
	}
}
