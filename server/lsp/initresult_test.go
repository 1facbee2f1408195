package lsp

import (
	"encoding/json"
	"testing"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

// TestInitResultIsGLSPs holds darman's own initialize answer to the bytes
// glsp's InitializeResult gives for the same capabilities, with and
// without the completion engine.
func TestInitResultIsGLSPs(t *testing.T) {
	choices := ModelChoices{Models: []ModelChoice{{ID: "anthropic/claude-x", Name: "Claude X", ContextWindow: 200_000}}, Default: "anthropic/claude-x"}
	for _, tc := range []struct {
		name          string
		engine, items bool
		choices       ModelChoices
	}{
		{name: "no completion", choices: choices},
		{name: "no models", choices: ModelChoices{}},
		{name: "inline completion", engine: true, choices: choices},
		{name: "inline and items", engine: true, items: true, choices: choices},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{opts: Options{Version: "v1.2.3"}}
			got, err := json.Marshal(completionCapabilities(s.initializeResult(tc.choices), tc.engine, tc.engine && tc.items))
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(glspInitializeResult(s, tc.choices, tc.engine, tc.items))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("darman's answer\n%s\nglsp's\n%s", got, want)
			}
		})
	}
}

// glspInitializeResult is the answer as glsp's types give it: the
// reference darman's own types are held to.
func glspInitializeResult(s *Server, choices ModelChoices, engine, items bool) any {
	version := s.opts.Version
	res := protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync: protocol.TextDocumentSyncOptions{
				OpenClose: &protocol.True,
				Change:    ptr(protocol.TextDocumentSyncKindIncremental),
				Save:      protocol.SaveOptions{IncludeText: &protocol.False},
			},
			CodeActionProvider: protocol.CodeActionOptions{
				CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix, protocol.CodeActionKindRefactorRewrite, protocol.CodeActionKindSource},
				ResolveProvider: &protocol.True,
			},
			ExecuteCommandProvider: &protocol.ExecuteCommandOptions{Commands: commandNames()},
			Workspace: &protocol.ServerCapabilitiesWorkspace{
				WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
					Supported:           &protocol.True,
					ChangeNotifications: &protocol.BoolOrString{Value: true},
				},
			},
			Experimental: map[string]any{"darman": map[string]any{
				"protocolVersion": ProtocolVersion,
				"models":          nonNil(choices.Models),
				"model":           choices.Default,
				"agents":          agentInfos(s.catalog()),
			}},
		},
		ServerInfo: &protocol.InitializeResultServerInfo{Name: "darman", Version: &version},
	}
	if !engine {
		return res
	}
	caps := res.Capabilities
	if items {
		caps.CompletionProvider = &protocol.CompletionOptions{ResolveProvider: &protocol.False}
	}
	type capabilities struct {
		protocol.ServerCapabilities
		InlineCompletionProvider bool `json:"inlineCompletionProvider"`
	}
	return struct {
		Capabilities capabilities                         `json:"capabilities"`
		ServerInfo   *protocol.InitializeResultServerInfo `json:"serverInfo,omitempty"`
	}{capabilities{caps, true}, res.ServerInfo}
}
