package tool

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/darman-dev/darman/agent"
)

//go:embed todo.md
var todoDescription string

type todoItem struct {
	Content  string `json:"content" jsonschema:"the step, in a short imperative sentence"`
	Status   string `json:"status" jsonschema:"where the step is"`
	Priority string `json:"priority,omitempty" jsonschema:"how much the step matters"`
}

type todoInput struct {
	Todos []todoItem `json:"todos" jsonschema:"the whole plan, in order"`
}

var todoMarks = map[string]string{"pending": "[ ]", "in_progress": "[~]", "completed": "[x]", "cancelled": "[-]"}

// newTodo returns the todo tool.
func newTodo() Tool {
	return newTyped(Info{
		Name:        "todo",
		Description: todoDescription,
		Kind:        agent.ToolKindThink,
		Timeout:     5 * time.Second,
	}, func(s *jsonschema.Schema) {
		setEnum(s, []string{"pending", "in_progress", "completed", "cancelled"}, "todos", "[]", "status")
		setEnum(s, []string{"high", "medium", "low"}, "todos", "[]", "priority")
	}, runTodo)
}

func runTodo(ctx context.Context, env *Env, in todoInput) (Result, error) {
	var b strings.Builder
	entries := make([]agent.PlanEntry, 0, len(in.Todos))
	done, active := 0, 0
	for i, t := range in.Todos {
		content := strings.TrimSpace(t.Content)
		if content == "" {
			return failure("invalid input", "Step %d has no content: every step needs a short description.", i+1), nil
		}
		switch t.Status {
		case "completed":
			done++
		case "cancelled":
			// ACP plans have no cancelled state: a dropped step leaves the
			// plan people see, and stays in the list the model keeps.
		case "in_progress":
			active++
		}
		if t.Status != "cancelled" {
			entries = append(entries, agent.PlanEntry{Content: content, Status: t.Status, Priority: t.Priority})
		}
		fmt.Fprintf(&b, "%s %s", todoMarks[t.Status], content)
		if t.Priority != "" {
			fmt.Fprintf(&b, " (%s)", t.Priority)
		}
		b.WriteString("\n")
	}
	if env.Plan != nil {
		env.Plan(entries)
	}
	head := fmt.Sprintf("The plan has %d steps, %d completed.", len(in.Todos), done)
	if len(in.Todos) == 0 {
		head = "The plan is now empty."
	}
	if active > 1 {
		head += fmt.Sprintf(" %d steps are in progress; keep one in progress at a time when you can.", active)
	}
	return Result{
		Output:   strings.TrimRight(head+"\n"+b.String(), "\n"),
		Title:    fmt.Sprintf("plan: %d/%d done", done, len(in.Todos)),
		Metadata: metadata(map[string]any{"todos": in.Todos}),
	}, nil
}
