package provider_test

import (
	"fmt"

	"github.com/darman-dev/darman/agent/llm/provider"
)

// Each preset says what its server is sent back of the model's reasoning.
func ExamplePresets() {
	for _, p := range provider.Presets() {
		switch p.Name {
		case "deepseek", "openrouter", "mistral":
			fmt.Printf("%s (%s): %s\n", p.Name, p.BaseURL, p.Reasoning)
		}
	}
	// Output:
	// openrouter (https://openrouter.ai/api/v1): reasoning_details sent back unchanged
	// deepseek (https://api.deepseek.com): reasoning_content sent back with tool-call turns
	// mistral (https://api.mistral.ai/v1): not sent back
}
