package config

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// layer decodes one source's tree onto the configuration built so far. It
// checks every value against the Go type it lands in, so a problem is
// reported with this source's name and the key path, and the merge rules
// fall out of decoding onto existing values: struct fields and map entries
// merge, slices and scalars are replaced, permission rules are appended.
type layer struct {
	source  string // the name used in problems
	dir     string // the directory relative paths are resolved against
	dirs    dirs
	ps      *problems
	origins map[string]string // key path → source that last set it
}

func (l *layer) problem(path, msg string, err error) {
	l.ps.add(Problem{Source: l.source, Path: path, Message: msg, Err: err})
}

func (l *layer) warn(path, msg string) {
	w := l.source
	if path != "" {
		w += ": " + path
	}
	l.ps.warnings = append(l.ps.warnings, w+": "+msg)
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	rulesType    = reflect.TypeFor[Rules]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	enumType     = reflect.TypeFor[enum]()
)

// fieldOpts are the checks named in a field's config tag.
type fieldOpts struct {
	model, path, ext, url, agent bool
	min                          *float64
}

func parseFieldOpts(tag string) fieldOpts {
	var o fieldOpts
	for opt := range strings.SplitSeq(tag, ",") {
		switch {
		case opt == "model":
			o.model = true
		case opt == "path":
			o.path = true
		case opt == "ext":
			o.ext = true
		case opt == "url":
			o.url = true
		case opt == "agent":
			o.agent = true
		case strings.HasPrefix(opt, "min="):
			if f, err := strconv.ParseFloat(opt[len("min="):], 64); err == nil {
				o.min = &f
			}
		}
	}
	return o
}

type fieldInfo struct {
	name  string
	index int
	opts  fieldOpts
}

type structInfo struct {
	fields []fieldInfo
	names  []string
}

var structCache sync.Map // reflect.Type → *structInfo

func structFields(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		si.fields = append(si.fields, fieldInfo{name: name, index: i, opts: parseFieldOpts(f.Tag.Get("config"))})
		si.names = append(si.names, name)
	}
	structCache.Store(t, si)
	return si
}

func (si *structInfo) field(name string) (fieldInfo, bool) {
	for _, f := range si.fields {
		if f.name == name {
			return f, true
		}
	}
	return fieldInfo{}, false
}

// decode checks n against v's type and stores it in v.
func (l *layer) decode(path string, n *node, v reflect.Value, opts fieldOpts) {
	if n.bad {
		return
	}
	if path != "" {
		l.origins[path] = l.source
	}
	t := v.Type()
	switch {
	case t == durationType:
		l.decodeDuration(path, n, v, opts)
		return
	case t == rulesType:
		l.decodeRules(path, n, v)
		return
	case t == rawType:
		if n.kind == kindNull {
			v.SetZero()
		} else {
			v.SetBytes(n.rawJSON())
		}
		return
	case t.Implements(enumType):
		values := reflect.Zero(t).Interface().(enum).values()
		if n.kind != kindString || !slices.Contains(values, n.text) {
			l.problem(path, fmt.Sprintf("expected %s, got %s", quoteList(values, "or"), n.describe()), nil)
			return
		}
		v.SetString(n.text)
		return
	}

	switch t.Kind() {
	case reflect.String:
		if n.kind != kindString {
			l.problem(path, "expected a string, got "+n.describe(), nil)
			return
		}
		s, ok := l.checkString(path, n, opts)
		if ok {
			v.SetString(s)
		}
	case reflect.Int, reflect.Int64:
		l.decodeInt(path, n, v, opts)
	case reflect.Float64:
		l.decodeFloat(path, n, v, opts)
	case reflect.Bool:
		if n.kind != kindBool {
			l.problem(path, "expected true or false, got "+n.describe(), nil)
			return
		}
		v.SetBool(n.text == "true")
	case reflect.Pointer:
		if n.kind == kindNull {
			v.SetZero()
			return
		}
		elem := reflect.New(t.Elem())
		l.decode(path, n, elem.Elem(), opts)
		v.Set(elem)
	case reflect.Slice:
		if n.kind != kindArray {
			l.problem(path, fmt.Sprintf("expected %s, got %s", describeType(t), n.describe()), nil)
			return
		}
		s := reflect.MakeSlice(t, len(n.items), len(n.items))
		for i, it := range n.items {
			l.decode(indexPath(path, i), it, s.Index(i), opts)
		}
		v.Set(s)
	case reflect.Map:
		l.decodeMap(path, n, v)
	case reflect.Struct:
		l.decodeStruct(path, n, v)
	default:
		// Unreachable for the types in this package; a new field of an
		// unsupported kind shows up in the tests as this problem.
		l.problem(path, fmt.Sprintf("darman cannot decode a value of Go type %s (a bug in darman)", t), nil)
	}
}

func (l *layer) checkString(path string, n *node, opts fieldOpts) (string, bool) {
	s := n.text
	switch {
	case opts.model:
		if _, _, err := ParseModelRef(s); err != nil {
			l.problem(path, "expected a model as provider/model-id (e.g. anthropic/claude-sonnet-4-5), got "+n.describe(), nil)
			return "", false
		}
	case opts.ext:
		if len(s) < 2 || s[0] != '.' || strings.ContainsAny(s, `/\`) || strings.ContainsFunc(s, isSpace) {
			l.problem(path, `expected a file extension starting with ".", e.g. ".go", got `+n.describe(), nil)
			return "", false
		}
	case opts.url:
		if s == "" {
			return s, true
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			l.problem(path, "expected an http:// or https:// URL, got "+n.describe(), nil)
			return "", false
		}
	case opts.agent:
		if msg := checkAgentPattern(s); msg != "" {
			l.problem(path, msg, nil)
			return "", false
		}
	case opts.path:
		if s == "" {
			return s, true
		}
		p, err := l.dirs.resolve(l.dir, s)
		if err != nil {
			l.problem(path, fmt.Sprintf("cannot expand %q: %v", s, err), err)
			return "", false
		}
		return p, true
	}
	return s, true
}

func (l *layer) decodeInt(path string, n *node, v reflect.Value, opts fieldOpts) {
	var i int64
	ok := n.kind == kindNumber
	if ok {
		var err error
		if i, err = strconv.ParseInt(n.text, 10, 64); err != nil {
			// 1e3 is an integer too.
			f, ferr := strconv.ParseFloat(n.text, 64)
			ok = ferr == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53
			i = int64(f)
		}
	}
	if !ok || v.OverflowInt(i) {
		l.problem(path, "expected an integer, got "+n.describe(), nil)
		return
	}
	if opts.min != nil && float64(i) < *opts.min {
		l.problem(path, fmt.Sprintf("expected an integer of at least %g, got %s", *opts.min, n.text), nil)
		return
	}
	v.SetInt(i)
}

func (l *layer) decodeFloat(path string, n *node, v reflect.Value, opts fieldOpts) {
	f, err := strconv.ParseFloat(n.text, 64)
	if n.kind != kindNumber || err != nil {
		l.problem(path, "expected a number, got "+n.describe(), nil)
		return
	}
	if opts.min != nil && f < *opts.min {
		l.problem(path, fmt.Sprintf("expected a number of at least %g, got %s", *opts.min, n.text), nil)
		return
	}
	v.SetFloat(f)
}

func (l *layer) decodeDuration(path string, n *node, v reflect.Value, opts fieldOpts) {
	const want = `expected a duration such as "30s", "2m" or "1h30m", got `
	if n.kind != kindString {
		l.problem(path, want+n.describe(), nil)
		return
	}
	d, err := time.ParseDuration(n.text)
	if err != nil {
		l.problem(path, want+n.describe(), nil)
		return
	}
	if zeroOK := opts.min != nil && *opts.min == 0; d < 0 || d == 0 && !zeroOK {
		l.problem(path, "expected a positive duration, got "+n.describe(), nil)
		return
	}
	v.SetInt(int64(d))
}

// dupKey reports a key that appears twice in one object: JSON parsers
// disagree on which one wins, so neither is guessed.
func (l *layer) dupKey(seen map[string]bool, path, key string) bool {
	if seen[key] {
		l.problem(path, "duplicate key: it already appears earlier in the same object; keep one", nil)
		return true
	}
	seen[key] = true
	return false
}

func (l *layer) decodeStruct(path string, n *node, v reflect.Value) {
	if n.kind != kindObject {
		l.problem(path, "expected an object, got "+n.describe(), nil)
		return
	}
	si := structFields(v.Type())
	seen := make(map[string]bool, len(n.fields))
	for _, m := range n.fields {
		p := keyPath(path, m.key)
		if l.dupKey(seen, p, m.key) {
			continue
		}
		if path == "" && m.key == "$schema" {
			continue
		}
		f, ok := si.field(m.key)
		if !ok {
			l.problem(p, unknownKey(m.key, si.names), nil)
			continue
		}
		l.decode(p, m.value, v.Field(f.index), f.opts)
	}
}

func unknownKey(key string, names []string) string {
	if s := suggest(key, names); s != "" {
		return fmt.Sprintf("unknown key (did you mean %q?)", s)
	}
	return "unknown key (expected " + quoteList(names, "or") + ")"
}

func (l *layer) decodeMap(path string, n *node, v reflect.Value) {
	t := v.Type()
	if n.kind != kindObject {
		l.problem(path, "expected an object, got "+n.describe(), nil)
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(t, len(n.fields)))
	}
	seen := make(map[string]bool, len(n.fields))
	for _, m := range n.fields {
		p := keyPath(path, m.key)
		if l.dupKey(seen, p, m.key) {
			continue
		}
		if m.key == "" {
			l.problem(p, "the name must not be empty", nil)
			continue
		}
		key := reflect.ValueOf(m.key).Convert(t.Key())
		elem := reflect.New(t.Elem()).Elem()
		if old := v.MapIndex(key); old.IsValid() {
			elem.Set(old)
		}
		l.decode(p, m.value, elem, fieldOpts{})
		v.SetMapIndex(key, elem)
	}
}

func (l *layer) decodeRules(path string, n *node, v reflect.Value) {
	if n.kind != kindObject {
		l.problem(path, "expected an object mapping permission names to actions, got "+n.describe(), nil)
		return
	}
	actions := Action("").values()
	rules := v.Interface().(Rules)
	action := func(path string, n *node) (Action, bool) {
		if n.bad {
			return "", false
		}
		if n.kind != kindString || !slices.Contains(actions, n.text) {
			l.problem(path, fmt.Sprintf("expected %s, got %s", quoteList(actions, "or"), n.describe()), nil)
			return "", false
		}
		return Action(n.text), true
	}
	seen := make(map[string]bool, len(n.fields))
	for _, m := range n.fields {
		p := keyPath(path, m.key)
		if l.dupKey(seen, p, m.key) {
			continue
		}
		if m.key == "" {
			l.problem(p, "the permission name must not be empty", nil)
			continue
		}
		if msg := CheckPermissionName(m.key); msg != "" {
			l.problem(p, msg, nil)
			continue
		}
		l.origins[p] = l.source
		switch m.value.kind {
		case kindString:
			if a, ok := action(p, m.value); ok {
				rules = append(rules, Rule{Permission: m.key, Pattern: "*", Action: a})
			}
		case kindObject:
			patterns := make(map[string]bool, len(m.value.fields))
			for _, pm := range m.value.fields {
				pp := keyPath(p, pm.key)
				if l.dupKey(patterns, pp, pm.key) {
					continue
				}
				if pm.key == "" {
					l.problem(pp, `the pattern must not be empty (use "*" to match everything)`, nil)
					continue
				}
				if a, ok := action(pp, pm.value); ok {
					rules = append(rules, Rule{Permission: m.key, Pattern: pm.key, Action: a})
				}
			}
		default:
			if !m.value.bad {
				l.problem(p, fmt.Sprintf("expected %s, or an object mapping patterns to actions, got %s",
					quoteList(actions, "or"), m.value.describe()), nil)
			}
		}
	}
	v.Set(reflect.ValueOf(rules))
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	}
	return "a value of type " + t.String()
}
