package diagnostics

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/config"
)

func TestConfiguredRootMarkersAndSettings(t *testing.T) {
	list, err := servers(map[string]config.LSP{"go": {
		RootMarkers: []string{"WORKSPACE"},
		Settings:    json.RawMessage(`{"gopls": {"staticcheck": true}}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var gopls *server
	for _, s := range list {
		if s.name == "go" {
			gopls = s
		}
	}
	if !reflect.DeepEqual(gopls.rootMarkers, []string{"WORKSPACE"}) {
		t.Errorf("root markers = %v", gopls.rootMarkers)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(gopls.settings, &got); err != nil {
		t.Fatal(err)
	}
	// The user's setting is added; darman's own default stays.
	if got["gopls"]["staticcheck"] != true || got["gopls"]["diagnosticsDelay"] != "0s" {
		t.Errorf("merged settings = %s", gopls.settings)
	}

	_, err = servers(map[string]config.LSP{"go": {Settings: json.RawMessage(`{"gopls": `)}})
	if err == nil || !strings.HasPrefix(err.Error(), "lsp.go.settings: ") {
		t.Errorf("broken settings: %v", err)
	}
}
