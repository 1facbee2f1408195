package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema returns the JSON Schema (draft 2020-12) of a config file,
// generated from the Go types: descriptions from the jsonschema tags,
// checks from the config tags, defaults from [Default]. Point "$schema" at
// docs/darman.schema.json to get completion and checking in editors.
func Schema() ([]byte, error) {
	actions := enumSchema(Action("").values(), "")
	s, err := jsonschema.For[Config](&jsonschema.ForOptions{
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{
			durationType: {
				Type:     "string",
				Pattern:  `^([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h)(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))*$`,
				Examples: []any{"30s", "2m", "1h30m"},
			},
			rawType:                           {},
			reflect.TypeFor[Action]():         actions,
			reflect.TypeFor[Level]():          enumSchema(Level("").values(), ""),
			reflect.TypeFor[ProviderType]():   enumSchema(ProviderType("").values(), ""),
			reflect.TypeFor[ProviderAPI]():    enumSchema(ProviderAPI("").values(), ""),
			reflect.TypeFor[CachedTokens]():   enumSchema(CachedTokens("").values(), ""),
			reflect.TypeFor[ReasoningField](): enumSchema(ReasoningField("").values(), ""),
			reflect.TypeFor[ReasoningTurns](): enumSchema(ReasoningTurns("").values(), ""),
			reflect.TypeFor[EnvInherit]():     enumSchema(EnvInherit("").values(), ""),
			rulesType: {
				Type: "object",
				AdditionalProperties: &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
					actions,
					{
						Type:                 "object",
						Description:          "Patterns mapped to actions, e.g. {\"*\": \"ask\", \"git status*\": \"allow\"}.",
						AdditionalProperties: actions,
					},
				}},
				Examples: []any{map[string]any{"edit": "ask", "bash": map[string]any{"*": "ask", "git status*": "allow"}}},
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("config schema: %w", err)
	}
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.Title = "darman configuration"
	s.Description = "darman.json, .darman/config.json and the user's config.json."
	s.Properties["$schema"] = &jsonschema.Schema{Type: "string", Description: "The JSON Schema of this file; ignored by darman."}
	s.PropertyOrder = append([]string{"$schema"}, s.PropertyOrder...)
	fixSchema(s, reflect.TypeFor[Config](), reflect.ValueOf(defaults(dirs{goos: "linux", lookup: noEnv})))
	return json.MarshalIndent(s, "", "  ")
}

func noEnv(string) (string, bool) { return "", false }

func enumSchema(values []string, description string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: description}
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}

// fixSchema adds what the inference cannot know, walking the Go type and
// its schema together: the config tags' checks, the defaults, and no
// "null" (the loader accepts null only for the tri-state booleans, where it
// means "unknown", which is also what leaving the key out means).
func fixSchema(s *jsonschema.Schema, t reflect.Type, def reflect.Value) {
	if s == nil {
		return
	}
	if i := slices.Index(s.Types, "null"); i >= 0 && len(s.Types) == 2 {
		s.Type, s.Types = s.Types[1-i], nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		def = reflect.Value{}
	}
	switch t.Kind() {
	case reflect.Struct:
		if t == rulesType {
			return
		}
		si := structFields(t)
		for _, f := range si.fields {
			fs := s.Properties[f.name]
			var fdef reflect.Value
			if def.IsValid() {
				fdef = def.Field(f.index)
			}
			applyOpts(fs, f.opts)
			if fdef.IsValid() && !f.opts.path && isScalar(fdef) && !fdef.IsZero() {
				fs.Default = defaultJSON(fdef)
			}
			fixSchema(fs, t.Field(f.index).Type, fdef)
		}
	case reflect.Map:
		fixSchema(s.AdditionalProperties, t.Elem(), reflect.Value{})
	case reflect.Slice:
		if t != rawType {
			fixSchema(s.Items, t.Elem(), reflect.Value{})
		}
	}
}

func applyOpts(s *jsonschema.Schema, o fieldOpts) {
	if o.min != nil {
		s.Minimum = o.min
	}
	switch {
	case o.model:
		s.Pattern = `^[^/\s]+/\S+$`
		s.Examples = []any{"anthropic/claude-sonnet-4-5", "ollama/qwen3:8b"}
	case o.url:
		s.Format = "uri"
		s.Pattern = `^https?://`
	case o.ext && s.Items != nil:
		s.Items.Pattern = `^\.[^/\\\s]+$`
	}
}

func isScalar(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String, reflect.Int, reflect.Int64, reflect.Float64, reflect.Bool:
		return true
	}
	return false
}

func defaultJSON(v reflect.Value) json.RawMessage {
	x := v.Interface()
	if d, ok := x.(time.Duration); ok {
		x = d.String()
		if d%time.Second == 0 {
			x = fmt.Sprintf("%ds", d/time.Second)
		}
	}
	b, _ := json.Marshal(x)
	return b
}
