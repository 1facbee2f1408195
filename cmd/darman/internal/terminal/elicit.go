package terminal

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/darman-dev/darman/agent/permission"
)

// Elicit takes an MCP server's elicitation to the user's terminal,
// between permission questions, never over one.
func (a *Asker) Elicit(ctx context.Context, e permission.Elicitation) (permission.ElicitAnswer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fresh()
	out := a.out
	if e.Mode == "url" {
		fmt.Fprintf(out, "\n? the MCP server %s asks you to open a URL: %s\n  %s\n", e.Server, e.Message, e.URL)
		fmt.Fprint(out, "  [y] I will open it  [n] decline  [c] cancel\n> ")
		s, err := a.line(ctx)
		if err != nil {
			return permission.ElicitAnswer{}, err
		}
		switch strings.ToLower(s) {
		case "y", "yes":
			return permission.ElicitAnswer{Action: "accept"}, nil
		case "c":
			return permission.ElicitAnswer{Action: "cancel"}, nil
		}
		return permission.ElicitAnswer{Action: "decline"}, nil
	}
	fmt.Fprintf(out, "\n? the MCP server %s asks: %s\n", e.Server, e.Message)
	fmt.Fprint(out, "  [a] answer  [n] decline  [c] cancel\n> ")
	s, err := a.line(ctx)
	if err != nil {
		return permission.ElicitAnswer{}, err
	}
	switch strings.ToLower(s) {
	case "a", "y", "yes":
	case "c":
		return permission.ElicitAnswer{Action: "cancel"}, nil
	default:
		return permission.ElicitAnswer{Action: "decline"}, nil
	}
	content := map[string]any{}
	for _, f := range e.Fields {
		for {
			fmt.Fprintf(out, "  %s", fieldPrompt(f))
			s, err := a.line(ctx)
			if err != nil {
				return permission.ElicitAnswer{}, err
			}
			if s == "" && !f.Required {
				break // the server applies its default
			}
			v, err := fieldValue(f, s)
			if err != nil {
				fmt.Fprintf(out, "  %v\n", err)
				continue
			}
			content[f.Name] = v
			break
		}
	}
	return permission.ElicitAnswer{Action: "accept", Content: content}, nil
}

// fieldPrompt renders one form field: its name or title, what it is, the
// choices and the default.
func fieldPrompt(f permission.ElicitField) string {
	var b strings.Builder
	name := f.Title
	if name == "" {
		name = f.Name
	}
	b.WriteString(name)
	if f.Description != "" {
		b.WriteString(" — " + f.Description)
	}
	kind := f.Type
	if f.Type == "array" {
		kind = "comma-separated list"
	}
	if len(f.Enum) > 0 {
		kind += ": " + strings.Join(f.Enum, " | ")
	}
	if kind != "" {
		b.WriteString(" (" + kind + ")")
	}
	if f.Required {
		b.WriteString(" [required]")
	} else if f.Default != nil {
		fmt.Fprintf(&b, " [default %v]", f.Default)
	}
	b.WriteString(": ")
	return b.String()
}

// fieldValue converts what the user typed to the field's JSON type; the
// error says what to type instead.
func fieldValue(f permission.ElicitField, s string) (any, error) {
	switch f.Type {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("answer yes or no")
	case "integer":
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", s)
		}
		return n, inBounds(f, float64(n))
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return n, inBounds(f, n)
	case "array":
		var items []any
		for _, it := range strings.Split(s, ",") {
			if it = strings.TrimSpace(it); it == "" {
				continue
			}
			if len(f.Enum) > 0 && !slices.Contains(f.Enum, it) {
				return nil, fmt.Errorf("%q is not a choice: choose from %s, separated by commas", it, strings.Join(f.Enum, ", "))
			}
			items = append(items, it)
		}
		return items, nil
	}
	if len(f.Enum) > 0 {
		for _, v := range f.Enum {
			if v == s {
				return s, nil
			}
		}
		return nil, fmt.Errorf("choose one of %s", strings.Join(f.Enum, ", "))
	}
	return s, nil
}

// inBounds says what is wrong with n for a field with bounds.
func inBounds(f permission.ElicitField, n float64) error {
	switch {
	case f.Minimum != nil && n < *f.Minimum:
		return fmt.Errorf("%v is less than %v", n, *f.Minimum)
	case f.Maximum != nil && n > *f.Maximum:
		return fmt.Errorf("%v is more than %v", n, *f.Maximum)
	}
	return nil
}
