package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/darman-dev/darman/agent/complete"
	"github.com/darman-dev/darman/internal/config"
)

// diagnoseCompletion reports the inline completion model darman lsp would
// use, and why (or why none); with check, it asks the model for one
// completion through the engine the editor's requests go through.
func diagnoseCompletion(ctx context.Context, r *report, c config.Config, root string, check bool, log *slog.Logger) {
	cc, why, err := completionSetup(c, nil, completionHTTPClient(), log)
	switch {
	case err != nil:
		r.add("completion", "model", "fail", err.Error())
		return
	case cc == nil:
		r.add("completion", "model", "missing", "inline completions are off: "+why)
		return
	}
	ref := c.Completion.Model
	if c.Completion.Provider != "" && !strings.Contains(ref, "/") {
		ref = c.Completion.Provider + "/" + ref
	}
	detail := why
	if cc.Items {
		detail += "; also as textDocument/completion items"
	}
	r.add("completion", ref, "ok", detail)
	if !check {
		return
	}
	o := cc.Options
	o.Root, o.Debounce, o.NoDefinitions, o.NoBuffers = root, -1, true, true
	e, err := complete.New(o)
	if err != nil {
		r.add("completion", "check", "fail", err.Error())
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
		r.add("completion", "check", "fail", fmt.Sprintf("%v (after %s)", err, took))
	case res.Text == "":
		r.add("completion", "check", "warn", fmt.Sprintf("the model answered nothing for `return ` in a Go function (%s, %s)", res.Reason, took))
	default:
		st := e.Stats()
		r.add("completion", "check", "ok", fmt.Sprintf("%q in %s (%d input, %d output tokens)", res.Text, took, st.InputTokens, st.OutputTokens))
	}
}

// diagnoseCompletion adds the completion lines to a report, after the
// language servers'.
func (a *app) diagnoseCompletion(ctx context.Context, r *report, check bool) {
	loaded, err := a.config()
	if err != nil {
		return // the report says why already
	}
	root, _ := a.workspaceRoot()
	log, _ := a.logger()
	diagnoseCompletion(ctx, r, loaded.Config, root, check, log)
}
