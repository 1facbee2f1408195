package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/internal/config"
)

// Completion reports the inline completion model darman lsp would use
// (the engine's options opts, nil when completions are off; items: also as
// completion items), and why (or why none, or what is wrong: err); with
// check, it asks the model for one completion through the engine the
// editor's requests go through, in root.
func Completion(ctx context.Context, r *Report, c config.Completion, opts *complete.Options, items bool, why string, err error, root string, check bool) {
	switch {
	case err != nil:
		r.Add("completion", "model", "fail", err.Error())
		return
	case opts == nil:
		r.Add("completion", "model", "missing", "inline completions are off: "+why)
		return
	}
	ref := c.Model
	if c.Provider != "" && !strings.Contains(ref, "/") {
		ref = c.Provider + "/" + ref
	}
	detail := why
	if items {
		detail += "; also as textDocument/completion items"
	}
	r.Add("completion", ref, "ok", detail)
	if !check {
		return
	}
	o := *opts
	o.Root, o.Debounce, o.NoDefinitions, o.NoBuffers = root, -1, true, true
	e, err := complete.New(o)
	if err != nil {
		r.Add("completion", "check", "fail", err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	text := "// add returns the sum of a and b.\nfunc add(a, b int) int {\n\treturn \n}\n"
	offset := strings.Index(text, "return ") + len("return ")
	start := time.Now()
	res, err := e.Complete(ctx, complete.Request{URI: "doctor:check.go", Path: "", Language: "go", Text: text, Offset: offset, Invoked: true})
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case err != nil:
		r.Add("completion", "check", "fail", fmt.Sprintf("%v (after %s)", err, took))
	case res.Text == "":
		r.Add("completion", "check", "warn", fmt.Sprintf("the model answered nothing for `return ` in a Go function (%s, %s)", res.Reason, took))
	default:
		st := e.Stats()
		r.Add("completion", "check", "ok", fmt.Sprintf("%q in %s (%d input, %d output tokens)", res.Text, took, st.InputTokens, st.OutputTokens))
	}
}
