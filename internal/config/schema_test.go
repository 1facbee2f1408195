package config_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/darman-dev/darman/internal/config"
)

var update = flag.Bool("update", false, "rewrite docs/darman.schema.json from the Go types")

var schemaFile = filepath.Join("..", "..", "docs", "darman.schema.json")

// TestSchemaFile keeps the shipped schema equal to the generated one.
func TestSchemaFile(t *testing.T) {
	got, err := config.Schema()
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/config -run Schema -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date: run go test ./internal/config -run Schema -update", schemaFile)
	}
}

// TestSchemaAgreesWithLoader validates documents with the generated schema
// and loads them: what the loader accepts the schema accepts, and a few
// mistakes both reject.
func TestSchemaAgreesWithLoader(t *testing.T) {
	data, err := config.Schema()
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("the schema does not resolve: %v", err)
	}
	tests := []struct {
		doc   string
		valid bool
	}{
		{`{}`, true},
		{`{"$schema": "../docs/darman.schema.json", "model": "anthropic/claude-sonnet-4-5", "smallModel": "ollama/qwen3:8b",
			"dataDir": "~/darman", "log": {"level": "debug", "file": "darman.log"},
			"provider": {"corp": {"type": "openai-compatible", "baseURL": "https://llm.example/v1", "apiKey": "k",
				"headers": {"x": "y"}, "timeout": "1m30s",
				"models": {"m": {"name": "M", "contextWindow": 1000, "maxOutput": 100, "reasoning": true,
					"cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 1.25}}}}},
			"retry": {"maxAttempts": 2, "maxDelay": "10s"}, "agent": {"maxSteps": 5},
			"permission": {"edit": "ask", "bash": {"*": "ask", "git status*": "allow"}},
			"lsp": {"go": {"disabled": true}, "zig": {"command": ["zls"], "extensions": [".zig"], "env": {"A": "b"},
				"initializationOptions": {"any": ["thing", 1]}}}}`, true},
		{`{"permission": {"bash": {"git *": "yes"}}}`, false},
		{`{"permission": {"edit": 3}}`, false},
		{`{"provider": {"anthropic": {"apikey": "k"}}}`, false},
		{`{"agent": {"maxSteps": "ten"}}`, false},
		{`{"agent": {"maxSteps": 0}}`, false},
		{`{"model": "sonnet"}`, false},
		{`{"retry": {"maxDelay": "5 minutes"}}`, false},
		{`{"log": {"level": "verbose"}}`, false},
		{`{"lsp": {"go": {"extensions": ["go"]}}}`, false},
		{`{"unknown": 1}`, false},
	}
	for _, tt := range tests {
		var doc any
		if err := json.Unmarshal([]byte(tt.doc), &doc); err != nil {
			t.Fatal(err)
		}
		schemaErr := resolved.Validate(doc)
		f := newFixture(t)
		f.write("darman.json", tt.doc)
		_, loadErr := f.load()
		if (schemaErr == nil) != tt.valid || (loadErr == nil) != tt.valid {
			t.Errorf("%s:\nschema: %v\nloader: %v\nwant valid=%v from both", tt.doc, schemaErr, loadErr, tt.valid)
		}
	}
}
