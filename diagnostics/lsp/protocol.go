package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

// darman's client speaks glsp's protocol types, the ones the LSP front
// (server/lsp) speaks too, named below so that the rest of diagnostics/
// needs no import of glsp. glsp's types are LSP 3.16's; where a server
// sends a 3.17 shape glsp has no type for, or glsp's type decodes what
// servers send wrongly, this file keeps a small type of its own and says
// why beside it. Those decode only what darman reads, and every union
// the specification allows (number or string, one shape or another)
// decodes without losing a value.

type (
	// Position is a zero-based line and a character offset within the
	// line, counted in the units of the negotiated position encoding
	// (UTF-16 code units unless the server chose otherwise).
	Position = protocol.Position
	// Range is a half-open span between two positions.
	Range = protocol.Range
	// Location is a range in a document. Its URI is a plain string in
	// glsp's type; the client puts every one it decodes in
	// DocumentURI's spelling (canonicalLocation).
	Location = protocol.Location
	// TextEdit replaces a range with new text.
	TextEdit = protocol.TextEdit
	// FileEvent is one entry of workspace/didChangeWatchedFiles.
	FileEvent = protocol.FileEvent
	// FileChangeType is a FileEvent's Type, which glsp leaves an unnamed
	// UInteger.
	FileChangeType = protocol.UInteger
	// SymbolKind is the LSP symbol kind (1 File … 26 TypeParameter).
	SymbolKind = protocol.SymbolKind
	// Severity is a diagnostic's severity: 1 error, 2 warning, 3
	// information, 4 hint. Zero means the server did not say; clients
	// treat it as an error.
	Severity = protocol.DiagnosticSeverity
	// ServerInfo names the server, from the initialize result.
	ServerInfo = protocol.InitializeResultServerInfo
)

// FileEvent types.
const (
	FileCreated = protocol.FileChangeTypeCreated
	FileChanged = protocol.FileChangeTypeChanged
	FileDeleted = protocol.FileChangeTypeDeleted
)

// DocumentURI is a document's URI, a file:// one for files. One the
// server sends is decoded in darman's own spelling (see UnmarshalText):
// glsp's DocumentUri is a plain string, which would key the same file
// under two spellings.
type DocumentURI string

// canonicalLocation puts a decoded Location's URI in DocumentURI's
// spelling.
func canonicalLocation(l *Location) {
	l.URI = string(canonicalURI(runtime.GOOS, DocumentURI(l.URI)))
}

// locationOrLink decodes either a Location or a LocationLink, which
// definition requests may return. It is not glsp's LocationLink, whose
// target ranges are not pointers: a link without a selection range would
// point at the file's first character.
type locationOrLink struct {
	URI                  DocumentURI `json:"uri"`
	Range                Range       `json:"range"`
	TargetURI            DocumentURI `json:"targetUri"`
	TargetSelectionRange *Range      `json:"targetSelectionRange"`
	TargetRange          *Range      `json:"targetRange"`
}

func (l locationOrLink) location() Location {
	if l.TargetURI == "" {
		return Location{URI: string(l.URI), Range: l.Range}
	}
	switch {
	case l.TargetSelectionRange != nil:
		return Location{URI: string(l.TargetURI), Range: *l.TargetSelectionRange}
	case l.TargetRange != nil:
		return Location{URI: string(l.TargetURI), Range: *l.TargetRange}
	}
	return Location{URI: string(l.TargetURI)}
}

// Severities.
const (
	SeverityError       = protocol.DiagnosticSeverityError
	SeverityWarning     = protocol.DiagnosticSeverityWarning
	SeverityInformation = protocol.DiagnosticSeverityInformation
	SeverityHint        = protocol.DiagnosticSeverityHint
)

// SeverityName is the severity's name, "error" for zero (not said).
func SeverityName(s Severity) string {
	switch s {
	case SeverityError, 0:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
		return "information"
	case SeverityHint:
		return "hint"
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// Code is a diagnostic's code. Servers send a number (TypeScript's 2322)
// or a string (gopls's "UnusedVar"); both survive as text. glsp's
// IntegerOrString decodes with a value receiver and so keeps neither.
type Code string

// UnmarshalJSON accepts a string, a number or null.
func (c *Code) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*c = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("diagnostic code: %w", err)
		}
		*c = Code(s)
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("diagnostic code is neither a string nor a number: %s", b)
		}
		*c = Code(n.String())
	}
	return nil
}

// Diagnostic is one problem the server reports. It is glsp's
// Diagnostic but for three fields: glsp's Code loses every code (see
// Code); its Severity and Source are pointers, an allocation each per
// diagnostic on the read goroutine; and its Data, which darman never
// reads, would be decoded into maps. A diagnostic's tags are not read.
type Diagnostic struct {
	Range    Range    `json:"range"`
	Severity Severity `json:"severity,omitempty"`
	Code     Code     `json:"code,omitempty"`
	// CodeDescription links to the documentation of Code, when the
	// server has some (pyright's rule pages, for instance).
	CodeDescription *protocol.CodeDescription `json:"codeDescription,omitempty"`
	Source          string                    `json:"source,omitempty"`
	Message         string                    `json:"message"`
	// RelatedInformation points at other places that belong to the
	// problem (TypeScript's "'x' is declared here"); their URIs are put
	// in DocumentURI's spelling by canonicalRelated.
	RelatedInformation []protocol.DiagnosticRelatedInformation `json:"relatedInformation,omitempty"`
}

// canonicalRelated puts the URIs of decoded diagnostics' related places
// in DocumentURI's spelling.
func canonicalRelated(items []Diagnostic) {
	for i := range items {
		for j := range items[i].RelatedInformation {
			canonicalLocation(&items[i].RelatedInformation[j].Location)
		}
	}
}

// PublishDiagnosticsParams is the payload of textDocument/publishDiagnostics.
// Version is nil when the server does not say which document version the
// set belongs to. It is not glsp's: its items are darman's Diagnostic,
// its URI keys the sets in darman's spelling, and glsp's Version is
// unsigned where darman's document versions are int32.
type PublishDiagnosticsParams struct {
	URI         DocumentURI  `json:"uri"`
	Version     *int32       `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// WorkspaceEdit is what rename returns. Servers use either Changes or
// DocumentChanges; DocumentChanges may also hold create, rename and delete
// operations, kept in FileOps. It is not glsp's, whose decoding takes
// every entry of documentChanges for a TextDocumentEdit: a rename of a
// file would read as an empty edit, and darman must refuse it.
type WorkspaceEdit struct {
	Changes map[DocumentURI][]TextEdit
	// Edits holds the text edits of DocumentChanges, in order.
	Edits []TextDocumentEdit
	// FileOps holds create, rename and delete operations, undecoded.
	FileOps []json.RawMessage
}

// TextDocumentEdit is the edits to one document (glsp's holds its edits
// as []any).
type TextDocumentEdit struct {
	URI   DocumentURI
	Edits []TextEdit
}

// UnmarshalJSON sorts documentChanges into text edits and file operations.
func (w *WorkspaceEdit) UnmarshalJSON(b []byte) error {
	var raw struct {
		Changes         map[DocumentURI][]TextEdit `json:"changes"`
		DocumentChanges []json.RawMessage          `json:"documentChanges"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*w = WorkspaceEdit{Changes: raw.Changes}
	for _, dc := range raw.DocumentChanges {
		var probe struct {
			Kind         string `json:"kind"`
			TextDocument *struct {
				URI DocumentURI `json:"uri"`
			} `json:"textDocument"`
			Edits []TextEdit `json:"edits"`
		}
		if err := json.Unmarshal(dc, &probe); err != nil {
			return fmt.Errorf("documentChanges entry: %w", err)
		}
		if probe.Kind != "" || probe.TextDocument == nil {
			w.FileOps = append(w.FileOps, dc)
			continue
		}
		w.Edits = append(w.Edits, TextDocumentEdit{URI: probe.TextDocument.URI, Edits: probe.Edits})
	}
	return nil
}

var symbolKindNames = [...]string{
	1: "file", 2: "module", 3: "namespace", 4: "package", 5: "class",
	6: "method", 7: "property", 8: "field", 9: "constructor", 10: "enum",
	11: "interface", 12: "function", 13: "variable", 14: "constant",
	15: "string", 16: "number", 17: "boolean", 18: "array", 19: "object",
	20: "key", 21: "null", 22: "enumMember", 23: "struct", 24: "event",
	25: "operator", 26: "typeParameter",
}

// SymbolKindName is the kind's name in lower camel case, as the
// specification spells it ("function", "enumMember").
func SymbolKindName(k SymbolKind) string {
	if k > 0 && int(k) < len(symbolKindNames) {
		return symbolKindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseSymbolKind is the inverse of SymbolKindName, case-insensitively.
func ParseSymbolKind(s string) (SymbolKind, bool) {
	for k, name := range symbolKindNames {
		if name != "" && strings.EqualFold(name, s) {
			return SymbolKind(k), true
		}
	}
	return 0, false
}

// WorkspaceSymbol is one result of workspace/symbol, in either the 3.17
// WorkspaceSymbol shape or the older SymbolInformation shape; a location
// without a range (allowed by 3.17) has a zero Range and HasRange false.
// glsp has only SymbolInformation, whose location must have a range.
type WorkspaceSymbol struct {
	Name          string
	Kind          SymbolKind
	ContainerName string
	Location      Location
	HasRange      bool
}

// UnmarshalJSON accepts both result shapes, in one pass.
func (s *WorkspaceSymbol) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name          string     `json:"name"`
		Kind          SymbolKind `json:"kind"`
		ContainerName string     `json:"containerName"`
		Location      struct {
			URI   DocumentURI `json:"uri"`
			Range *Range      `json:"range"`
		} `json:"location"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("workspace symbol: %w", err)
	}
	*s = WorkspaceSymbol{Name: raw.Name, Kind: raw.Kind, ContainerName: raw.ContainerName, Location: Location{URI: string(raw.Location.URI)}}
	if raw.Location.Range != nil {
		s.Location.Range, s.HasRange = *raw.Location.Range, true
	}
	return nil
}

// DocumentSymbol is one entry of a document's outline: glsp's, and the
// container a flat answer names. Servers that answer with flat
// SymbolInformation get converted: Range and SelectionRange are the
// symbol's location, Children is empty and ContainerName is set, for
// which glsp's DocumentSymbol has no field.
type DocumentSymbol struct {
	protocol.DocumentSymbol
	// ContainerName is set only for flat results.
	ContainerName string `json:"-"`
}

// Hover is a hover result reduced to its text: Markdown or plain text, as
// the server sent it. glsp's MarkedString decodes with a value receiver,
// so a hover in that shape (or a list of them) would read as empty.
type Hover struct {
	Contents string
	Range    *Range
}

// UnmarshalJSON flattens MarkupContent, MarkedString and MarkedString[].
func (h *Hover) UnmarshalJSON(b []byte) error {
	var raw struct {
		Contents json.RawMessage `json:"contents"`
		Range    *Range          `json:"range"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	text, err := markedText(raw.Contents)
	if err != nil {
		return fmt.Errorf("hover contents: %w", err)
	}
	*h = Hover{Contents: text, Range: raw.Range}
	return nil
}

func markedText(b json.RawMessage) (string, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return "", nil
	}
	switch b[0] {
	case '"':
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(b, &parts); err != nil {
			return "", err
		}
		var out []byte
		for _, p := range parts {
			s, err := markedText(p)
			if err != nil {
				return "", err
			}
			if len(out) > 0 {
				out = append(out, "\n\n"...)
			}
			out = append(out, s...)
		}
		return string(out), nil
	case '{':
		// MarkupContent {kind, value} or MarkedString {language, value}.
		var v struct {
			Language string `json:"language"`
			Value    string `json:"value"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return "", err
		}
		if v.Language != "" {
			return "```" + v.Language + "\n" + v.Value + "\n```", nil
		}
		return v.Value, nil
	}
	return "", fmt.Errorf("unexpected value %.40s", b)
}

// documentDiagnosticReport is the answer to textDocument/diagnostic, a
// 3.17 request glsp has no types for.
type documentDiagnosticReport struct {
	Kind     string       `json:"kind"` // "full" or "unchanged"
	ResultID string       `json:"resultId,omitempty"`
	Items    []Diagnostic `json:"items"`
}

// Capabilities is what the server said it can do, reduced to what darman
// uses. It is decoded from the raw object, not glsp's ServerCapabilities,
// which has neither 3.17's positionEncoding nor its diagnosticProvider.
type Capabilities struct {
	PositionEncoding Encoding
	// Sync is the textDocumentSync kind: 0 none, 1 full, 2 incremental.
	Sync int
	// OpenClose says the server wants didOpen and didClose.
	OpenClose bool
	// PullDiagnostics says the server answers textDocument/diagnostic.
	PullDiagnostics bool
	WorkspaceSymbol bool
	References      bool
	Definition      bool
	Hover           bool
	Rename          bool
	Formatting      bool
	DocumentSymbol  bool
	// Commands are the workspace/executeCommand commands the server
	// offers.
	Commands []string
}

func (c *Capabilities) decode(b json.RawMessage) error {
	var raw struct {
		PositionEncoding        string          `json:"positionEncoding"`
		TextDocumentSync        json.RawMessage `json:"textDocumentSync"`
		DiagnosticProvider      json.RawMessage `json:"diagnosticProvider"`
		WorkspaceSymbolProvider json.RawMessage `json:"workspaceSymbolProvider"`
		ReferencesProvider      json.RawMessage `json:"referencesProvider"`
		DefinitionProvider      json.RawMessage `json:"definitionProvider"`
		HoverProvider           json.RawMessage `json:"hoverProvider"`
		RenameProvider          json.RawMessage `json:"renameProvider"`
		FormattingProvider      json.RawMessage `json:"documentFormattingProvider"`
		DocumentSymbolProvider  json.RawMessage `json:"documentSymbolProvider"`
		ExecuteCommandProvider  *struct {
			Commands []string `json:"commands"`
		} `json:"executeCommandProvider"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("server capabilities: %w", err)
	}
	enc, err := ParseEncoding(raw.PositionEncoding)
	if err != nil {
		return err
	}
	*c = Capabilities{
		PositionEncoding: enc,
		PullDiagnostics:  offered(raw.DiagnosticProvider),
		WorkspaceSymbol:  offered(raw.WorkspaceSymbolProvider),
		References:       offered(raw.ReferencesProvider),
		Definition:       offered(raw.DefinitionProvider),
		Hover:            offered(raw.HoverProvider),
		Rename:           offered(raw.RenameProvider),
		Formatting:       offered(raw.FormattingProvider),
		DocumentSymbol:   offered(raw.DocumentSymbolProvider),
	}
	if raw.ExecuteCommandProvider != nil {
		c.Commands = raw.ExecuteCommandProvider.Commands
	}
	sync := bytes.TrimSpace(raw.TextDocumentSync)
	switch {
	case len(sync) == 0 || string(sync) == "null":
		// The specification's default is None, but every server darman
		// knows that omits it still wants documents opened.
		c.Sync, c.OpenClose = 1, true
	case sync[0] == '{':
		var opts struct {
			OpenClose bool `json:"openClose"`
			Change    int  `json:"change"`
		}
		if err := json.Unmarshal(sync, &opts); err != nil {
			return fmt.Errorf("textDocumentSync: %w", err)
		}
		c.Sync, c.OpenClose = opts.Change, opts.OpenClose
	default:
		if err := json.Unmarshal(sync, &c.Sync); err != nil {
			return fmt.Errorf("textDocumentSync: %w", err)
		}
		c.OpenClose = c.Sync > 0
	}
	return nil
}

// offered reports whether a "boolean | options" provider field enables the
// feature: present and not false or null.
func offered(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && string(b) != "false" && string(b) != "null"
}
