package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// typed is a Tool whose input decodes into In. Its schema is generated from
// In, and input that does not follow the schema is refused with a result
// saying what was wrong before run sees it.
type typed[In any] struct {
	info Info
	run  func(ctx context.Context, env *Env, in In) (Result, error)
	// source is the generated schema; it is resolved for validation at
	// the first call (half of the schema's cost, which a darman that
	// calls no tool, or not yet, does not pay before its first request).
	source   *jsonschema.Schema
	resolve  sync.Once
	schema   *jsonschema.Resolved
	resolveE error
}

// newTyped builds a tool taking In. adjust, when not nil, refines the
// generated schema (enums, bounds) before it is published.
func newTyped[In any](info Info, adjust func(*jsonschema.Schema), run func(context.Context, *Env, In) (Result, error)) *typed[In] {
	raw, source, err := schemaFor[In](adjust)
	if err != nil {
		// The input types are fixed at compile time and covered by tests:
		// this is a programming error, not bad input.
		panic(fmt.Sprintf("tool %s: %v", info.Name, err))
	}
	info.Schema = raw
	return &typed[In]{info: info, source: source, run: run}
}

// resolved is the schema the input is checked against.
func (t *typed[In]) resolved() (*jsonschema.Resolved, error) {
	t.resolve.Do(func() {
		t.schema, t.resolveE = t.source.Resolve(nil)
		if t.resolveE != nil {
			t.resolveE = fmt.Errorf("tool %s: resolve the input schema: %w", t.info.Name, t.resolveE)
		}
	})
	return t.schema, t.resolveE
}

func (t *typed[In]) Info() Info { return t.info }

func (t *typed[In]) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	if env == nil {
		return Result{}, errors.New("tool " + t.info.Name + ": no environment (Env is nil)")
	}
	schema, err := t.resolved()
	if err != nil {
		return Result{}, err
	}
	in, err := decodeInput[In](schema, input)
	if err != nil {
		return Result{
			Output:  fmt.Sprintf("Invalid input for %s: %v. Fix the arguments to follow the tool's schema and call it again.", t.info.Name, err),
			IsError: true,
			Title:   "invalid input",
		}, nil
	}
	return t.run(ctx, env, in)
}

// schemaFor generates In's JSON Schema, as sent and as generated (to
// resolve for validation).
func schemaFor[In any](adjust func(*jsonschema.Schema)) (json.RawMessage, *jsonschema.Schema, error) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, nil, fmt.Errorf("generate the input schema: %w", err)
	}
	notNull(s)
	if adjust != nil {
		adjust(s)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, nil, fmt.Errorf("encode the input schema: %w", err)
	}
	if len(s.Properties) == 0 {
		// OpenAI refuses an object schema without "properties", and the
		// generated one omits an empty map.
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, nil, fmt.Errorf("encode the input schema: %w", err)
		}
		m["properties"] = map[string]any{}
		if raw, err = json.Marshal(m); err != nil {
			return nil, nil, fmt.Errorf("encode the input schema: %w", err)
		}
	}
	return raw, s, nil
}

// notNull makes the generated ["null", "array"] of slices plain "array":
// models should send a list, and some providers refuse type unions.
func notNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		notNull(p)
	}
	notNull(s.Items)
}

// decodeInput checks the model's arguments against the schema and decodes
// them. Missing arguments count as an empty object.
func decodeInput[In any](schema *jsonschema.Resolved, input json.RawMessage) (In, error) {
	var in In
	input = bytes.TrimSpace(input)
	if len(input) == 0 || bytes.Equal(input, []byte("null")) {
		input = []byte("{}")
	}
	var generic any
	if err := json.Unmarshal(input, &generic); err != nil {
		return in, fmt.Errorf("the arguments are not valid JSON (%v)", err)
	}
	if _, ok := generic.(map[string]any); !ok {
		return in, errors.New("the arguments must be a JSON object")
	}
	if err := schema.Validate(generic); err != nil {
		return in, err
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return in, err
	}
	return in, nil
}

// setEnum restricts a string property (found by its path of property
// names, "[]" stepping into array items) to values.
func setEnum(s *jsonschema.Schema, values []string, path ...string) {
	for _, p := range path {
		if p == "[]" {
			s = s.Items
		} else {
			s = s.Properties[p]
		}
	}
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
}

// setMinimum gives an integer property a lower bound.
func setMinimum(s *jsonschema.Schema, min float64, prop string) {
	s.Properties[prop].Minimum = &min
}
