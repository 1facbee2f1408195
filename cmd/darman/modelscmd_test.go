package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// listedModel is one model as darman models --json lists it.
type listedModel struct {
	Model         string
	Known         bool
	ContextWindow int
	Input         []string
	Reasoning     bool
	FIMTemplate   string
	Cost          *struct{ Input, Output float64 }
	Served        *bool
}

// TestModelsListsWhatEachTakes lists the models of a keyed preset (from
// the catalog) and of a local server (from the configuration, then from
// what the server answers with --remote), with what each takes and costs.
func TestModelsListsWhatEachTakes(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.Start(t, llmtest.Script{Models: []string{"qwen2.5-coder:7b", "llama3.2"}})
	e.write(filepath.Join(e.home, ".config", "darman", "config.json"), fmt.Sprintf(`{
		"provider": {"local": {"type": "openai-compatible", "baseURL": %q,
			"models": {"qwen2.5-coder:7b": {"contextWindow": 32768}}}}}`, srv.URL+"/v1"))
	e.vars = append(e.vars, "ANTHROPIC_API_KEY=sk-ant-test-0123456789")

	text := e.ok("models")
	for _, want := range []string{"anthropic — darman's built-in catalog", "anthropic/claude-sonnet-4-5", "text+image",
		"local — the configuration's models of local", "local/qwen2.5-coder:7b", "qwen", "? = not known to darman"} {
		if !strings.Contains(text, want) {
			t.Errorf("darman models lacks %q:\n%s", want, text)
		}
	}

	var list []struct {
		Provider string
		Source   string
		Models   []listedModel
	}
	if err := json.Unmarshal([]byte(e.ok("models", "--json", "--remote")), &list); err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for i, p := range list {
		for j, m := range p.Models {
			rows[m.Model] = i*1000 + j
		}
	}
	get := func(model string) listedModel {
		k, ok := rows[model]
		if !ok {
			t.Fatalf("darman models --json --remote has no %s: %+v", model, list)
		}
		return list[k/1000].Models[k%1000]
	}
	sonnet := get("anthropic/claude-sonnet-4-5")
	if !sonnet.Known || !slices.Contains(sonnet.Input, "image") || !sonnet.Reasoning || sonnet.Cost == nil || sonnet.Cost.Input != 3 || sonnet.Cost.Output != 15 {
		t.Errorf("claude-sonnet-4-5 = %+v", sonnet)
	}
	qwen := get("local/qwen2.5-coder:7b")
	if qwen.ContextWindow != 32768 || qwen.FIMTemplate != "qwen" || qwen.Served == nil || !*qwen.Served || qwen.Cost != nil {
		t.Errorf("the configured local model = %+v", qwen)
	}
	if llama := get("local/llama3.2"); llama.Known || llama.Served == nil || !*llama.Served {
		t.Errorf("a model the server serves and nothing knows = %+v", llama)
	}
	// Without a key or provider, the answer says what to do.
	bare := newEnv(t)
	if _, errs, code := bare.run("models"); code != 1 || !strings.Contains(errs, "ANTHROPIC_API_KEY") {
		t.Errorf("darman models with no provider: exit %d\n%s", code, errs)
	}
}

func TestVersionFlag(t *testing.T) {
	e := newEnv(t)
	if out := e.ok("--version"); !strings.HasPrefix(out, "darman ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("darman --version = %q", out)
	}
}

// doctor fails when darman has no model to talk to (it says what to set),
// and warns when the model is one darman knows nothing of (its cost would
// be counted as 0); a wrong model id's 404 is reported as that, in the
// server's words.
func TestDoctorAndRunOnAMissingOrUnknownModel(t *testing.T) {
	e := newEnv(t)
	none, _, noneCode := e.run("doctor")
	if noneCode != 1 || !strings.Contains(none, "✗ model") || !strings.Contains(none, "ANTHROPIC_API_KEY") {
		t.Errorf("doctor with no model: exit %d\n%s", noneCode, none)
	}
	// Each provider's line says what is missing once, not its name again.
	for _, name := range []string{"anthropic", "azure", "bedrock"} {
		if l := lineWith(none, name+": "); l == "" || strings.Contains(l, "provider "+name) || strings.Contains(l, `provider "`+name+`"`) {
			t.Errorf("doctor's %s line: %q", name, l)
		}
	}
	e.userModel(t, llmtest.Script{Steps: []llmtest.Step{{Faults: []llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 404,
		Type: "not_found_error", Message: "model: claude-sonet-4-5", Times: -1}}}}}, "")
	cfg := filepath.Join(e.home, ".config", "darman", "config.json")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(b), "claude-sonnet-4-5", "claude-sonet-4-5", 1)), 0o644)
	out, _, code := e.run("doctor")
	if code != 0 || !strings.Contains(out, `darman knows no model "claude-sonet-4-5" of anthropic`) || strings.Contains(out, "✓ anthropic/claude-sonet-4-5") {
		t.Errorf("doctor with an unknown model: exit %d\n%s", code, out)
	}
	_, errs, code := e.run("run", "hi")
	if code != 1 || !strings.Contains(errs, `does not know the model "claude-sonet-4-5" (404): model: claude-sonet-4-5`) || strings.Contains(errs, "baseURL") {
		t.Errorf("run with a wrong model id: exit %d\n%s", code, errs)
	}
}
