package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

// The queries below send one request each and decode the answer. They
// expect the document to be open (Sync) with the content the positions
// refer to, and positions in the negotiated encoding
// (Capabilities().PositionEncoding).

func (c *Client) require(offered bool, what string) error {
	if !offered {
		name := c.info.Name
		if name == "" {
			name = "the language server"
		}
		return fmt.Errorf("%s: %w", name+" does not offer "+what, ErrUnsupported)
	}
	return nil
}

func docID(uri DocumentURI) protocol.TextDocumentIdentifier {
	return protocol.TextDocumentIdentifier{URI: string(uri)}
}

func docPos(uri DocumentURI, pos Position) protocol.TextDocumentPositionParams {
	return protocol.TextDocumentPositionParams{TextDocument: docID(uri), Position: pos}
}

// WorkspaceSymbols runs workspace/symbol.
func (c *Client) WorkspaceSymbols(ctx context.Context, query string) ([]WorkspaceSymbol, error) {
	if err := c.require(c.caps.WorkspaceSymbol, "workspace symbol search"); err != nil {
		return nil, err
	}
	var out []WorkspaceSymbol
	if err := c.call(ctx, "workspace/symbol", protocol.WorkspaceSymbolParams{Query: query}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// DocumentSymbols runs textDocument/documentSymbol; flat
// SymbolInformation answers become childless DocumentSymbols.
func (c *Client) DocumentSymbols(ctx context.Context, uri DocumentURI) ([]DocumentSymbol, error) {
	if err := c.require(c.caps.DocumentSymbol, "document symbols"); err != nil {
		return nil, err
	}
	var raw []json.RawMessage
	if err := c.call(ctx, "textDocument/documentSymbol", protocol.DocumentSymbolParams{TextDocument: docID(uri)}, &raw); err != nil {
		return nil, err
	}
	out := make([]DocumentSymbol, 0, len(raw))
	for _, r := range raw {
		var probe struct {
			Location *Location `json:"location"`
		}
		if err := json.Unmarshal(r, &probe); err != nil {
			return nil, fmt.Errorf("textDocument/documentSymbol: %w", err)
		}
		if probe.Location == nil {
			var s DocumentSymbol
			if err := json.Unmarshal(r, &s); err != nil {
				return nil, fmt.Errorf("textDocument/documentSymbol: %w", err)
			}
			out = append(out, s)
			continue
		}
		var ws WorkspaceSymbol
		if err := json.Unmarshal(r, &ws); err != nil {
			return nil, fmt.Errorf("textDocument/documentSymbol: %w", err)
		}
		out = append(out, DocumentSymbol{
			DocumentSymbol: protocol.DocumentSymbol{Name: ws.Name, Kind: ws.Kind, Range: ws.Location.Range, SelectionRange: ws.Location.Range},
			ContainerName:  ws.ContainerName,
		})
	}
	return out, nil
}

// References runs textDocument/references.
func (c *Client) References(ctx context.Context, uri DocumentURI, pos Position, includeDeclaration bool) ([]Location, error) {
	if err := c.require(c.caps.References, "references"); err != nil {
		return nil, err
	}
	params := protocol.ReferenceParams{
		TextDocumentPositionParams: docPos(uri, pos),
		Context:                    protocol.ReferenceContext{IncludeDeclaration: includeDeclaration},
	}
	var out []Location
	if err := c.call(ctx, "textDocument/references", params, &out); err != nil {
		return nil, err
	}
	for i := range out {
		canonicalLocation(&out[i])
	}
	return out, nil
}

// Definition runs textDocument/definition; links become their target's
// selection range.
func (c *Client) Definition(ctx context.Context, uri DocumentURI, pos Position) ([]Location, error) {
	if err := c.require(c.caps.Definition, "go to definition"); err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := c.call(ctx, "textDocument/definition", docPos(uri, pos), &raw); err != nil {
		return nil, err
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var links []locationOrLink
	if raw[0] == '{' {
		var one locationOrLink
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("textDocument/definition: %w", err)
		}
		links = append(links, one)
	} else if err := json.Unmarshal(raw, &links); err != nil {
		return nil, fmt.Errorf("textDocument/definition: %w", err)
	}
	out := make([]Location, len(links))
	for i, l := range links {
		out[i] = l.location()
	}
	return out, nil
}

// Hover runs textDocument/hover; nil means nothing to show.
func (c *Client) Hover(ctx context.Context, uri DocumentURI, pos Position) (*Hover, error) {
	if err := c.require(c.caps.Hover, "hover"); err != nil {
		return nil, err
	}
	var out *Hover
	if err := c.call(ctx, "textDocument/hover", docPos(uri, pos), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Rename runs textDocument/rename. The edit is returned, never applied.
func (c *Client) Rename(ctx context.Context, uri DocumentURI, pos Position, newName string) (*WorkspaceEdit, error) {
	if err := c.require(c.caps.Rename, "rename"); err != nil {
		return nil, err
	}
	params := protocol.RenameParams{TextDocumentPositionParams: docPos(uri, pos), NewName: newName}
	var out *WorkspaceEdit
	if err := c.call(ctx, "textDocument/rename", params, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = &WorkspaceEdit{}
	}
	return out, nil
}

// FormattingOptions are the options of textDocument/formatting, by name
// ("tabSize", "insertSpaces", ...).
type FormattingOptions = protocol.FormattingOptions

// Format runs textDocument/formatting and returns the server's edits.
func (c *Client) Format(ctx context.Context, uri DocumentURI, opts FormattingOptions) ([]TextEdit, error) {
	if err := c.require(c.caps.Formatting, "formatting"); err != nil {
		return nil, err
	}
	var out []TextEdit
	params := protocol.DocumentFormattingParams{TextDocument: docID(uri), Options: opts}
	if err := c.call(ctx, "textDocument/formatting", params, &out); err != nil {
		return nil, err
	}
	return out, nil
}
