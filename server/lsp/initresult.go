package lsp

// initResult is darman's answer to initialize: glsp's InitializeResult
// with only the fields darman sets, in glsp's order, so that the bytes are
// the ones glsp's type gives. glsp's ServerCapabilities reaches some fifty
// types that encoding/json must first walk; the answer is on the way to
// every start's first reply (docs/benchmarks.md, "Round 6b").
type initResult struct {
	Capabilities serverCapabilities `json:"capabilities"`
	ServerInfo   serverInfo         `json:"serverInfo"`
}

// serverCapabilities are the ServerCapabilities darman sets, and LSP
// 3.18's inlineCompletionProvider (after glsp's fields, as the completion
// engine adds it).
type serverCapabilities struct {
	TextDocumentSync         textDocumentSyncOptions `json:"textDocumentSync"`
	CompletionProvider       *completionOptions      `json:"completionProvider,omitempty"`
	CodeActionProvider       codeActionOptions       `json:"codeActionProvider"`
	ExecuteCommandProvider   executeCommandOptions   `json:"executeCommandProvider"`
	Workspace                workspaceCapabilities   `json:"workspace"`
	Experimental             experimentalCaps        `json:"experimental"`
	InlineCompletionProvider bool                    `json:"inlineCompletionProvider,omitempty"`
}

type textDocumentSyncOptions struct {
	OpenClose bool `json:"openClose"`
	// Change is a protocol.TextDocumentSyncKind.
	Change int `json:"change"`
	Save   struct {
		IncludeText bool `json:"includeText"`
	} `json:"save"`
}

type completionOptions struct {
	ResolveProvider bool `json:"resolveProvider"`
}

type codeActionOptions struct {
	CodeActionKinds []string `json:"codeActionKinds"`
	ResolveProvider bool     `json:"resolveProvider"`
}

type executeCommandOptions struct {
	Commands []string `json:"commands"`
}

type workspaceCapabilities struct {
	WorkspaceFolders struct {
		Supported           bool `json:"supported"`
		ChangeNotifications bool `json:"changeNotifications"`
	} `json:"workspaceFolders"`
}

// experimentalCaps is experimental.darman (docs/protocol.md), its keys in
// the sorted order a map of them had.
type experimentalCaps struct {
	Darman struct {
		Agents          []agentInfo   `json:"agents"`
		Model           string        `json:"model"`
		Models          []ModelChoice `json:"models"`
		ProtocolVersion int           `json:"protocolVersion"`
	} `json:"darman"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}
