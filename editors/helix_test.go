package editors

import (
	"strings"
	"testing"
	"time"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// helixMain does not build until darman fixes it; line 6 asks for it.
const helixMain = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\t// darman: greet the world\n\tfmt.Println(undefinedGreeting)\n}\n"

// helixFixed is line 7 after the agent's edit (non-ASCII on purpose).
const helixFixed = `fmt.Println("héllo, wörld")`

// pick chooses the menu item holding title in an open Helix menu: it
// finds the item's line and the top of the menu (the lines above it with
// text at the same column), moves down to it and presses Enter.
func (sc *screen) pick(title string) {
	sc.s.t.Helper()
	text := sc.waitText(title)
	lines := strings.Split(text, "\n")
	row, col := -1, -1
	for i, l := range lines {
		if c := strings.Index(l, title); c >= 0 {
			row, col = i, len([]rune(l[:c]))
			break
		}
	}
	at := func(i int) rune {
		r := []rune(lines[i])
		if col >= len(r) {
			return ' '
		}
		return r[col]
	}
	top := row
	border := func(r rune) bool { return r == ' ' || r >= 0x2500 && r <= 0x257f } // box drawing
	for top > 0 && !border(at(top-1)) {
		top--
	}
	for range row - top { // the first item is selected when the menu opens
		sc.keys("C-n")
	}
	sc.keys("Enter")
}

// TestHelix runs real Helix 25.07 in tmux with darman configured by the
// README's languages.toml exactly as printed, gopls beside it. On a
// `// darman:` line, `space a` lists darman's code actions; "darman: do it"
// starts a turn and Helix shows its transcript; darman's permission
// question comes in Helix's own popup and is answered there;
// the agent's edit lands in the open buffer (on screen, the file on disk
// unchanged), gopls's diagnostic goes away, `u` undoes the edit and `U`
// redoes it, and `:w` saves it with no "modified by an external process".
// Then a free prompt through `:lsp-workspace-command darman.prompt` runs a
// second turn whose edit lands in the buffer too; `:q!` quits, and darman
// exits with Helix.
func TestHelix(t *testing.T) {
	s := newSid(t)
	toml := docSnippet(t, "toml", "**Helix** (languages.toml")
	s.write("home/.config/helix/languages.toml", toml)
	s.workspace(llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "comment main", Steps: []llmtest.Step{ // the free prompt
			toolStep("read", map[string]string{"path": "main.go"}),
			toolStep("edit", map[string]string{"path": "main.go", "oldString": "// darman: greet the world", "newString": "// Greets the world, with accents."}),
			{Text: "Commented."},
		}},
	}, Steps: []llmtest.Step{ // "do it"
		toolStep("read", map[string]string{"path": "main.go"}),
		toolStep("edit", map[string]string{"path": "main.go", "oldString": "fmt.Println(undefinedGreeting)", "newString": helixFixed}),
		{Text: "main.go greets the world."},
	}}, map[string]string{"main.go": helixMain}, "")
	sc := s.tmux(s.in("ws"), "hx main.go")
	// gopls's diagnostic: the edit is to make it go away.
	sc.waitText("undefined: undefinedGreeting")

	sc.keys(":6", "Enter")
	sc.keys("Space")
	sc.keys("a")
	sc.waitText("darman: do it")
	sc.pick("darman: do it")

	// Helix 25.07 asks with its own popup (window/showMessageRequest)
	// and shows the transcript (window/showDocument) beside main.go.
	screen := sc.waitText("darman wants to edit: Edit main.go")
	if !strings.Contains(screen, "Untitled session") {
		t.Errorf("the transcript is not shown:\n%s", screen)
	}
	sc.pick("Allow once")
	sc.keys(":open main.go", "Enter")
	screen = sc.waitText(helixFixed)
	if got := s.read("ws/main.go"); got != helixMain {
		t.Errorf("darman wrote main.go behind Helix's buffer:\n%s", got)
	}
	screen = sc.waitFor("gopls's diagnostic gone", func(text string) bool {
		return !strings.Contains(text, "undefined: undefinedGreeting")
	})
	if !strings.Contains(screen, "[+]") {
		t.Errorf("the buffer is not shown modified:\n%s", screen)
	}

	sc.keys("Escape")
	time.Sleep(300 * time.Millisecond)
	sc.keys("u")
	sc.waitText("fmt.Println(undefinedGreeting)")
	sc.keys("U")
	sc.waitText(helixFixed)
	sc.keys(":w", "Enter")
	sc.waitFor("the file saved", func(string) bool { return strings.Contains(s.read("ws/main.go"), helixFixed) })
	screen = sc.text()
	if strings.Contains(screen, "modified by an external process") {
		t.Errorf(":w found the file changed behind the buffer:\n%s", screen)
	}
	if want := strings.Replace(helixMain, "fmt.Println(undefinedGreeting)", helixFixed, 1); s.read("ws/main.go") != want {
		t.Errorf("the saved file:\n%s\nwant\n%s", s.read("ws/main.go"), want)
	}

	// A prompt of one's own.
	sc.keys(`:lsp-workspace-command darman.prompt {"prompt": "comment main"}`, "Enter")
	sc.waitText("darman wants to edit: Edit main.go")
	sc.pick("Allow once")
	sc.keys(":open main.go", "Enter")
	sc.waitText("// Greets the world, with accents.")
	prompted := false
	for _, c := range s.model.ModelCalls() {
		prompted = prompted || strings.Contains(string(c.Body), "comment main")
	}
	if !prompted {
		t.Error("the model never got the free prompt")
	}

	sc.keys(":q!", "Enter")
	deadline := time.Now().Add(20 * time.Second)
	for s.darmanRunning() {
		if time.Now().After(deadline) {
			t.Fatal("darman still runs 20 s after Helix quit")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestHelixCompletionItem: with the docs' languages.toml for completions
// (darman beside gopls, completion items on through its config), typing
// in Helix's insert mode brings darman's suggestion into Helix's own
// completion menu beside gopls's items; choosing it inserts it after
// non-ASCII text, and :w saves it (formatted by gopls, as Helix does).
func TestHelixCompletionItem(t *testing.T) {
	s := newSid(t)
	s.write("home/.config/helix/languages.toml", docSnippet(t, "toml", "Helix has no inline completions"))
	// Only C-x asks: with Helix's automatic completion, a slow machine's
	// typing can open the menu with an automatic request first, and C-x
	// then asks no server again (seen under load: darman never asked).
	s.write("home/.config/helix/config.toml", "[editor]\nauto-completion = false\n")
	// The scripted model completes the word being typed, as a real one
	// would: after "fmt.Pri" it answers the rest.
	s.workspace(llmtest.Script{Reply: func(c *llmtest.Call) llmtest.Step {
		if strings.Contains(string(c.Body), "fmt.Pri") {
			return llmtest.Step{Text: "ntln(greeting)"}
		}
		return llmtest.Step{Text: ""}
	}}, map[string]string{"main.go": completionMain}, `, "completion": {"model": "anthropic/claude-haiku-4-5"}`)
	sc := s.tmux(s.in("ws"), "hx main.go")
	sc.waitText("main.go")
	sc.keys(":7", "Enter", "A")
	sc.literal("Pri")
	sc.keys("C-x")                   // Helix's completion menu, as a person opens it
	sc.waitText("Println(greeting)") // darman's item, in the menu
	// and gopls's: Helix adds a server's items when they come, so a menu
	// still waiting for gopls would change under the choice below.
	sc.waitText("Printf")
	// Choosing an item previews it in the line: go down the menu until
	// the line holds darman's text.
	const chosen = `_ = "é"; fmt.Println(greeting)`
	for i := 0; !strings.Contains(sc.text(), chosen); i++ {
		if i == 12 {
			t.Fatalf("darman's item was never chosen in the menu:\n%s", sc.text())
		}
		sc.keys("C-n")
	}
	// Normal mode again before ":w": a loaded machine's Helix that read
	// the Escape and the ":" at once would take them for Alt-:.
	sc.keys("Escape")
	sc.waitText(" NOR ")
	sc.keys(":w", "Enter")
	want := strings.Replace(completionMain, "\t_ = \"é\"; fmt.\n", "\t_ = \"é\"\n\tfmt.Println(greeting)\n", 1)
	sc.waitFor("main.go saved with darman's completion", func(string) bool { return s.read("ws/main.go") == want })
	if calls := s.model.ModelCalls(); len(calls) == 0 {
		t.Error("the completion model was never asked")
	}
}
