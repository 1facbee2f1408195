package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// Badger refuses a transaction bigger than a fraction of the store's
// memtable (agent/store's memTableSize), and values below its threshold
// count whole: a session with big pieces (a long streamed
// answer and reasoning, a command that printed megabytes, a large file
// read, a large image attached) is written whole, reads back whole in the
// export, and is sent whole to the model when the session goes on.
func TestRunKeepsABigSession(t *testing.T) {
	e := newEnv(t)
	var lines strings.Builder
	for i := range 60000 {
		fmt.Fprintf(&lines, "line %06d of the big file\n", i)
	}
	e.write("big.txt", lines.String())
	// A picture that does not compress: several MiB as a PNG, over 1 MiB
	// once scaled to the model's limit.
	rnd := rand.New(rand.NewPCG(1, 2))
	img := image.NewRGBA(image.Rect(0, 0, 1200, 1200))
	for i := range img.Pix {
		img.Pix[i] = uint8(rnd.Uint32())
	}
	img.SetRGBA(0, 0, color.RGBA{1, 2, 3, 255})
	var pic bytes.Buffer
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	e.write("shot.png", pic.String())

	var answer, reasoning strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&answer, "answer word %d. ", i)
		fmt.Fprintf(&reasoning, "thought %d. ", i)
	}
	e.withModel(t, llmtest.Script{Conversations: []llmtest.Conversation{
		{Match: "look", Steps: []llmtest.Step{
			{Reasoning: reasoning.String(), Chunks: 3000, Text: answer.String(), Usage: &llmtest.Usage{Input: 3000, Output: 40000}, ToolCalls: []llmtest.ToolCall{
				call("bash", `{"command":"seq 1 300000","description":"print a lot"}`),
				call("read", `{"path":"big.txt"}`),
			}},
			{Text: "Done with the big things.", Usage: &llmtest.Usage{Input: 60000, Output: 20}},
		}},
	}})
	out := e.ok("run", "--allow", "bash", "--image", "shot.png", "look at the big things")
	if !strings.Contains(out, "Done with the big things.") {
		t.Fatalf("stdout ends: %s", tail(out, 500))
	}
	id := firstSession(t, e)

	var exp struct {
		Messages []struct {
			Message struct{ Role string }
			Parts   []struct {
				Kind string
				Text string
				Tool *struct {
					Name   string
					Output string
				}
			}
		}
		Blobs map[string][]byte
	}
	if err := json.Unmarshal([]byte(e.ok("sessions", "export", id)), &exp); err != nil {
		t.Fatal(err)
	}
	var texts, thoughts, outputs []string
	for _, m := range exp.Messages {
		for _, p := range m.Parts {
			switch {
			case p.Kind == "text":
				texts = append(texts, p.Text)
			case p.Kind == "reasoning":
				thoughts = append(thoughts, p.Text)
			case p.Tool != nil:
				outputs = append(outputs, p.Tool.Name+": "+p.Tool.Output)
			}
		}
	}
	if !slicesHas(texts, answer.String()) {
		t.Errorf("the long answer (%d bytes) is not in the export whole: texts of %v bytes", answer.Len(), lens(texts))
	}
	if !slicesHas(thoughts, reasoning.String()) {
		t.Errorf("the long reasoning (%d bytes) is not in the export whole: reasoning of %v bytes", reasoning.Len(), lens(thoughts))
	}
	all := strings.Join(outputs, "\n")
	if !strings.Contains(all, "\n300000") || !strings.Contains(all, "line 000000 of the big file") {
		t.Errorf("the tool outputs are not in the export: %d of them, %d bytes", len(outputs), len(all))
	}
	big := 0
	for _, b := range exp.Blobs {
		big = max(big, len(b))
	}
	// (darman keeps the image as scaled to the provider's limit: about
	// 1 MiB of this one.)
	if big < 512<<10 {
		t.Errorf("the attached image is not in the export: the largest blob has %d bytes (the file %d)", big, pic.Len())
	}

	// The session goes on: its history, read back from the store, is the
	// next request's.
	srv := e.withModel(t, llmtest.Script{Conversations: []llmtest.Conversation{
		// (the scripted model answers by the assistant turns in the
		// request: the first run's two come first)
		{Match: "look", Steps: []llmtest.Step{{Text: "unused"}, {Text: "unused"}, {Text: "Seen it all."}}},
	}})
	e.ok("run", "--session", id, "again")
	calls := srv.ModelCalls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls", len(calls))
	}
	body := string(calls[0].Body)
	for _, want := range []string{"answer word 2999.", "300000", "line 000000 of the big file"} {
		if !strings.Contains(body, want) {
			t.Errorf("the request going on from the big session lacks %q (%d bytes)", want, len(body))
		}
	}
}

func slicesHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func lens(list []string) []int {
	var out []int
	for _, s := range list {
		out = append(out, len(s))
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
