package config

import "time"

// Completion configures inline completions (ghost text) in darman lsp:
// the model asked, the wire format, the context sent and the limits on
// cost. Completions are on when a model is set, unless enabled is false.
type Completion struct {
	Enabled  *bool  `json:"enabled,omitempty" jsonschema:"Whether darman lsp offers inline completions. Default: true when completion.model is set."`
	Model    string `json:"model,omitempty" jsonschema:"The completion model, as provider/model-id (ollama/qwen2.5-coder:1.5b, codestral/codestral-latest, anthropic/claude-haiku-4-5), or a bare model id with completion.provider."`
	Provider string `json:"provider,omitempty" jsonschema:"The provider of a bare completion.model id: a name of the provider section or a built-in provider."`
	API      string `json:"api,omitempty" jsonschema:"The wire format: completions (OpenAI /v1/completions with suffix), ollama (/api/generate), infill (llama.cpp /infill), fim (Mistral /v1/fim/completions) or chat (a chat model with a hole-filling prompt). Default: by provider (ollama, llamacpp → infill, codestral and mistral → fim, anthropic and openai → chat, others → completions)."`
	Template string `json:"template,omitempty" jsonschema:"The model's FIM tokens for servers that take a raw prompt: qwen, deepseek, starcoder2, codellama, codestral, auto (from the model id) or none (the server does FIM). Default none (vllm: auto)."`
	// Debounce is how long darman waits after an automatic trigger before
	// asking the model; a newer request in that time replaces it.
	Debounce    *time.Duration `json:"debounce,omitempty" config:"min=0" jsonschema:"How long to wait after a keystroke before asking the model (automatic triggers only), e.g. 100ms; \"0s\" for none. Default 150ms."`
	MaxTokens   int            `json:"maxTokens,omitempty" jsonschema:"The longest suggestion, in tokens. Default 128."`
	Temperature *float64       `json:"temperature,omitempty" jsonschema:"The sampling temperature. Default 0.1."`
	Stop        []string       `json:"stop,omitempty" jsonschema:"More stop sequences, after the template's and the single-line rule's."`
	// Languages switch completions per LSP language id; "*" is every
	// other language.
	Languages map[string]bool `json:"languages,omitempty" jsonschema:"Completions by LSP language id, e.g. {\"markdown\": false}; \"*\" sets the others. Default: every language."`
	Exclude   []string        `json:"exclude,omitempty" jsonschema:"Files never completed nor sent as context, as .gitignore-style patterns relative to the workspace (added to the built-in .env, .env.*, *.pem, *.key, id_rsa*, .netrc, .npmrc, .pypirc, secrets/ and more)."`
	// Items offers the suggestion as a textDocument/completion item too,
	// for editors without inline completions (Helix, Emacs, Neovim < 0.12).
	Items         bool              `json:"items,omitempty" jsonschema:"Also answer textDocument/completion with the suggestion as an item, for editors without inline completions (Helix, Emacs, Neovim before 0.12). Default false."`
	MaxConcurrent int               `json:"maxConcurrent,omitempty" jsonschema:"The most completion requests to the model at once, over every document. Default 2."`
	SkipComments  bool              `json:"skipCommentsStrings,omitempty" jsonschema:"Ask nothing while the cursor is in a line comment or a string (automatic triggers). Default false."`
	Context       CompletionContext `json:"context,omitzero" jsonschema:"What the model sees besides the cursor's file."`
}

// CompletionContext configures the context of a completion.
type CompletionContext struct {
	PrefixTokens int `json:"prefixTokens,omitempty" jsonschema:"The budget of the text before the cursor, in tokens (4 bytes each), cut at a line boundary. Default 1500."`
	SuffixTokens int `json:"suffixTokens,omitempty" jsonschema:"The budget of the text after the cursor, in tokens. Default 500."`
	// Buffers, Definitions: nil means on.
	Buffers       *bool          `json:"buffers,omitempty" jsonschema:"Send snippets of the open and recently edited buffers most like the cursor's neighbourhood. Default true."`
	BufferTokens  int            `json:"bufferTokens,omitempty" jsonschema:"The budget of the buffers' snippets, in tokens. Default 400."`
	Definitions   *bool          `json:"definitions,omitempty" jsonschema:"Send the definitions of the identifiers around the cursor, from the workspace's language server. Default true."`
	DefinitionMax int            `json:"definitionTokens,omitempty" jsonschema:"The budget of the definitions, in tokens. Default 400."`
	LSPBudget     *time.Duration `json:"lspBudget,omitempty" jsonschema:"How long the language server may take to answer before the completion goes without its definitions, e.g. 150ms. Default 150ms."`
}
