package terminal

import (
	"context"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/permission"
)

// The terminal asks an elicitation field by field, says what to type when an answer
// does not fit, and leaves optional fields empty for the server's default.
func TestTerminalGate(t *testing.T) {
	one, nine := 1.0, 9.0
	ask := func(input string, e permission.Elicitation) (permission.ElicitAnswer, string) {
		var out strings.Builder
		g := New(strings.NewReader(input), &out)
		ans, err := g.Elicit(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		return ans, out.String()
	}
	form := permission.Elicitation{Server: "paint", Mode: "form", Message: "Details?", Fields: []permission.ElicitField{
		{Name: "colour", Type: "string", Enum: []string{"red", "blue"}, Required: true},
		{Name: "count", Type: "integer", Required: true, Minimum: &one, Maximum: &nine},
		{Name: "glossy", Type: "boolean"},
		{Name: "note", Type: "string", Default: "none"},
	}}
	ans, out := ask("a\ngreen\nblue\nmany\n12\n3\nyes\n\n", form)
	if ans.Action != "accept" || ans.Content["colour"] != "blue" || ans.Content["count"] != 3 || ans.Content["glossy"] != true || len(ans.Content) != 3 {
		t.Errorf("answer %+v", ans)
	}
	for _, want := range []string{"the MCP server paint asks: Details?", "choose one of red, blue", `"many" is not a whole number`, "12 is more than 9", "[default none]"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal shows %q; want %q", out, want)
		}
	}
	tags := permission.Elicitation{Server: "paint", Mode: "form", Fields: []permission.ElicitField{
		{Name: "tags", Type: "array", Enum: []string{"matte", "gloss"}, Required: true}}}
	ans, out = ask("y\nmatte, shiny\nmatte, gloss\n", tags)
	if got, _ := ans.Content["tags"].([]any); ans.Action != "accept" || len(got) != 2 || !strings.Contains(out, `"shiny" is not a choice`) {
		t.Errorf("tags: %+v, %q; want shiny refused, then both choices", ans, out)
	}
	if ans, _ := ask("n\n", form); ans.Action != "decline" {
		t.Errorf("n: %+v; want decline", ans)
	}
	ans, out = ask("y\n", permission.Elicitation{Server: "auth", Mode: "url", Message: "Sign in", URL: "https://auth.example.com/x"})
	if ans.Action != "accept" || !strings.Contains(out, "https://auth.example.com/x") {
		t.Errorf("url: %+v, %q", ans, out)
	}
}
