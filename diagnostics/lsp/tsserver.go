package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

// typescript-language-server pushes a document's diagnostics in up to
// three sets per change, each the union of the kinds (syntax, semantic,
// suggestion) tsserver has answered so far, debounced, with no version and
// no sign of which set is the last. It does offer a workspace command that
// passes any request through to its tsserver and answers tsserver's
// response; tsserver's synchronous diagnostic requests, sent after the
// change (tsserver handles requests in order, a change first), answer the
// kinds for exactly the content darman sent. Asking for the three kinds is
// darman's pull diagnostics for that server.

// tsserverCommand is typescript-language-server's pass-through command.
const tsserverCommand = "typescript.tsserverRequest"

// tsserverKinds are tsserver's synchronous diagnostic requests, in the
// order typescript-language-server lists the kinds in a published set.
var tsserverKinds = []string{"syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync"}

// tsserverResponse is tsserver's answer to a diagnostic request.
type tsserverResponse struct {
	Type    string               `json:"type"`
	Command string               `json:"command"`
	Success bool                 `json:"success"`
	Message string               `json:"message"`
	Body    []tsserverDiagnostic `json:"body"`
}

// tsserverLocation is a 1-based line and a 1-based UTF-16 offset in it.
type tsserverLocation struct {
	Line   uint32 `json:"line"`
	Offset uint32 `json:"offset"`
}

func (l tsserverLocation) position() Position {
	return Position{Line: l.Line - min(l.Line, 1), Character: l.Offset - min(l.Offset, 1)}
}

type tsserverDiagnostic struct {
	Start    tsserverLocation `json:"start"`
	End      tsserverLocation `json:"end"`
	Text     string           `json:"text"`
	Code     Code             `json:"code"`
	Category string           `json:"category"`
	Source   string           `json:"source"`
	Related  []struct {
		Span *struct {
			Start tsserverLocation `json:"start"`
			End   tsserverLocation `json:"end"`
			File  string           `json:"file"`
		} `json:"span"`
		Message string `json:"message"`
	} `json:"relatedInformation"`
}

// diagnostic converts d the way typescript-language-server does before
// it publishes: positions less one, the category as the severity, the
// source "typescript" unless tsserver named one.
func (d tsserverDiagnostic) diagnostic() Diagnostic {
	out := Diagnostic{
		Range:    Range{Start: d.Start.position(), End: d.End.position()},
		Severity: SeverityError,
		Code:     d.Code,
		Source:   d.Source,
		Message:  d.Text,
	}
	switch d.Category {
	case "warning":
		out.Severity = SeverityWarning
	case "suggestion":
		out.Severity = SeverityHint
	}
	if out.Source == "" {
		out.Source = "typescript"
	}
	for _, r := range d.Related {
		if r.Span == nil {
			continue
		}
		out.RelatedInformation = append(out.RelatedInformation, protocol.DiagnosticRelatedInformation{
			Location: Location{URI: string(URIFromPath(r.Span.File)), Range: Range{Start: r.Span.Start.position(), End: r.Span.End.position()}},
			Message:  r.Message,
		})
	}
	return out
}

// tsserverPullLocked reports whether the document's diagnostics can be
// asked of tsserver through typescript-language-server.
func (c *Client) tsserverPullLocked() bool {
	return !c.tsserverBroken && slices.Contains(c.caps.Commands, tsserverCommand)
}

// errNotTSServer says the pass-through command answered something that is
// not a tsserver response: another server with a command of that name.
var errNotTSServer = errors.New(tsserverCommand + " did not answer with a tsserver response")

// pullTSServer asks tsserver for the three kinds of diagnostics of uri at
// once and returns them as typescript-language-server would publish them:
// in kind order, less the codes its settings ignore
// (diagnostics.ignoredCodes).
func (c *Client) pullTSServer(ctx context.Context, uri DocumentURI) ([]Diagnostic, error) {
	kinds := make([][]tsserverDiagnostic, len(tsserverKinds))
	errs := make([]error, len(tsserverKinds))
	var wg sync.WaitGroup
	for i, kind := range tsserverKinds {
		wg.Go(func() {
			var rep tsserverResponse
			params := protocol.ExecuteCommandParams{Command: tsserverCommand, Arguments: []any{kind, map[string]any{"file": uri}}}
			if err := c.call(ctx, "workspace/executeCommand", params, &rep); err != nil {
				errs[i] = err
				return
			}
			switch {
			case rep.Type == "response" && rep.Command == kind && rep.Success:
				kinds[i] = rep.Body
			case rep.Type == "response" && rep.Command == kind:
				errs[i] = fmt.Errorf("tsserver %s: %s", kind, rep.Message)
			case rep.Type == "cancelled" || rep.Type == "noServer" || rep.Type == "noContent":
				// typescript-language-server's own answers while its
				// tsserver restarts or drops the request.
				errs[i] = fmt.Errorf("tsserver %s: typescript-language-server answered %q", kind, rep.Type)
			default:
				errs[i] = fmt.Errorf("%w (%s: type %q, command %q)", errNotTSServer, kind, rep.Type, rep.Command)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	ignored := tsIgnoredCodes(c.opts.Settings)
	items := []Diagnostic{}
	for _, kind := range kinds {
		for _, d := range kind {
			if !ignored[string(d.Code)] {
				items = append(items, d.diagnostic())
			}
		}
	}
	return items, nil
}

// tsIgnoredCodes reads typescript-language-server's diagnostics.ignoredCodes
// from the settings darman sends it.
func tsIgnoredCodes(settings json.RawMessage) map[string]bool {
	var s struct {
		Diagnostics struct {
			IgnoredCodes []any `json:"ignoredCodes"`
		} `json:"diagnostics"`
	}
	if len(settings) == 0 || json.Unmarshal(settings, &s) != nil {
		return nil
	}
	out := map[string]bool{}
	// It compares numbers: a code given as a string ignores nothing.
	for _, v := range s.Diagnostics.IgnoredCodes {
		if n, ok := v.(float64); ok {
			out[strconv.FormatFloat(n, 'f', -1, 64)] = true
		}
	}
	return out
}
