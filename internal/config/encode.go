package config

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Encode writes c as a configuration file Load reads back to the same
// values: durations as "1m0s", permission rules in their object form
// ({"bash": {"*": "ask", "go test *": "allow"}}), fields in the order the
// types declare them, empty ones left out. darman config show prints it.
func Encode(c Config) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeValue(&b, reflect.ValueOf(c)); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func encodeValue(b *bytes.Buffer, v reflect.Value) error {
	switch {
	case v.Type() == durationType:
		return encodeJSON(b, time.Duration(v.Int()).String())
	case v.Type() == rulesType:
		return encodeRules(b, v.Interface().(Rules))
	case v.Type() == rawType:
		if v.Len() == 0 {
			b.WriteString("null")
			return nil
		}
		return encodeJSON(b, v.Interface())
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return encodeValue(b, v.Elem())
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fv := v.Field(i)
			if (strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")) && empty(fv) {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			encodeJSON(b, name)
			b.WriteByte(':')
			if err := encodeValue(b, fv); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeJSON(b, k.String())
			b.WriteByte(':')
			if err := encodeValue(b, v.MapIndex(k)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("null")
			return nil
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeValue(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	return encodeJSON(b, v.Interface())
}

// empty is omitempty's and omitzero's test: zero, or an empty map, slice
// or string.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	}
	return v.IsZero()
}

func encodeJSON(b *bytes.Buffer, x any) error {
	j, err := json.Marshal(x)
	if err != nil {
		return err
	}
	b.Write(j)
	return nil
}

// encodeRules writes rules in the object form. A permission's patterns
// keep their order; a pattern written twice keeps its last action at its
// last place, which is what the last-match-wins reading of the list gives.
// Rules of different permissions never match the same request, so their
// relative order carries no meaning.
func encodeRules(b *bytes.Buffer, rules Rules) error {
	var perms []string
	patterns := map[string][]Rule{}
	for _, r := range rules {
		if !slices.Contains(perms, r.Permission) {
			perms = append(perms, r.Permission)
		}
		ps := slices.DeleteFunc(patterns[r.Permission], func(x Rule) bool { return x.Pattern == r.Pattern })
		patterns[r.Permission] = append(ps, r)
	}
	b.WriteByte('{')
	for i, p := range perms {
		if i > 0 {
			b.WriteByte(',')
		}
		encodeJSON(b, p)
		b.WriteByte(':')
		rs := patterns[p]
		if len(rs) == 1 && rs[0].Pattern == "*" {
			encodeJSON(b, rs[0].Action)
			continue
		}
		b.WriteByte('{')
		for j, r := range rs {
			if j > 0 {
				b.WriteByte(',')
			}
			encodeJSON(b, r.Pattern)
			b.WriteByte(':')
			encodeJSON(b, r.Action)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return nil
}
