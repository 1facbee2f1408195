package provider

import (
	"sort"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
)

// preset is what darman knows about a well-known provider: where it is,
// which key it takes, and what it does with reasoning and usage beyond the
// API OpenAI documents. Each rule names the documentation it follows;
// docs/providers.md says the same per server.
type preset struct {
	display     string
	typ         llm.Type
	baseURL     string
	baseURLEnv  string
	keyEnv      string
	keyRequired bool
	headers     map[string]string
	// model is the model Select picks when only the key is known.
	model string
	// api is the wire API of an openai-type preset: responses (the
	// default) or chat.
	api string
	// reasoning is what Chat Completions requests send back of earlier
	// reasoning.
	reasoning llm.ReasoningReturn
	// openWeights: a server that renders the models' own chat templates
	// (the local servers), so model families' rules apply (gpt-oss's
	// harmony convention). Hosted servers that document no input field for
	// reasoning get none.
	openWeights bool
	// cachedApart: prompt_tokens leave the cached tokens out (used when a
	// usage block has no total_tokens to tell).
	cachedApart bool
	// auth is how requests are authorised: "" (the key as a bearer token,
	// or Anthropic's x-api-key), "azure" (api-key header, deployments and
	// api-version), "bedrock" (AWS credentials), "vertex" (Google
	// credentials).
	auth string
	// streamOptions is false for servers that refuse stream_options (they
	// send the usage chunk without being asked).
	noStreamOptions bool
	// toolCallExtra: tool calls carry extra_content back (Gemini's
	// thought signatures).
	toolCallExtra bool
}

var presets = map[string]preset{
	"anthropic": {
		display: "Anthropic", typ: llm.TypeAnthropic,
		baseURL: "https://api.anthropic.com", baseURLEnv: "ANTHROPIC_BASE_URL",
		keyEnv: "ANTHROPIC_API_KEY", keyRequired: true, model: "claude-sonnet-4-6",
	},
	"openai": {
		display: "OpenAI", typ: llm.TypeOpenAI,
		baseURL: "https://api.openai.com/v1", baseURLEnv: "OPENAI_BASE_URL",
		keyEnv: "OPENAI_API_KEY", keyRequired: true, model: "gpt-5.1",
	},
	"openrouter": {
		display: "OpenRouter", typ: llm.TypeOpenAICompatible,
		baseURL: "https://openrouter.ai/api/v1",
		keyEnv:  "OPENROUTER_API_KEY", keyRequired: true, model: "anthropic/claude-sonnet-4.6",
		// OpenRouter's app attribution headers.
		headers: map[string]string{"HTTP-Referer": "https://github.com/darman-dev/darman", "X-Title": "darman"},
		// openrouter.ai/docs/use-cases/reasoning-tokens, "Preserving
		// reasoning": pass reasoning_details back unchanged.
		reasoning: llm.ReasoningReturn{Field: llm.ReturnReasoningDetails},
	},
	"ollama": {
		display: "Ollama", typ: llm.TypeOpenAICompatible,
		baseURL: "http://127.0.0.1:11434/v1", baseURLEnv: "OLLAMA_HOST", keyEnv: "OLLAMA_API_KEY",
		openWeights: true,
	},
	"lmstudio": {
		display: "LM Studio", typ: llm.TypeOpenAICompatible,
		baseURL: "http://127.0.0.1:1234/v1", keyEnv: "LMSTUDIO_API_KEY",
		openWeights: true,
	},
	"vllm": {
		display: "vLLM", typ: llm.TypeOpenAICompatible,
		baseURL: "http://127.0.0.1:8000/v1", keyEnv: "VLLM_API_KEY",
		openWeights: true,
	},
	"llamacpp": {
		display: "llama.cpp", typ: llm.TypeOpenAICompatible,
		baseURL: "http://127.0.0.1:8080/v1", keyEnv: "LLAMA_API_KEY",
		openWeights: true,
	},
	"deepseek": {
		display: "DeepSeek", typ: llm.TypeOpenAICompatible,
		baseURL: "https://api.deepseek.com", keyEnv: "DEEPSEEK_API_KEY", keyRequired: true, model: "deepseek-chat",
		// api-docs.deepseek.com/guides/thinking_mode: the reasoning_content
		// of a turn that called tools must be passed back in every later
		// request, or the API answers 400; other turns' is ignored.
		reasoning: llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsToolCalls},
	},
	"zai": {
		display: "Z.ai (GLM)", typ: llm.TypeOpenAICompatible,
		baseURL: "https://api.z.ai/api/paas/v4", keyEnv: "ZAI_API_KEY", keyRequired: true, model: "glm-4.6",
		// docs.z.ai/guides/capabilities/thinking-mode: interleaved thinking
		// wants the thinking of tool-call turns returned with the tool
		// results; preserved thinking keeps earlier turns' too.
		reasoning: llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsAll},
	},
	"moonshot": {
		display: "Moonshot (Kimi)", typ: llm.TypeOpenAICompatible,
		baseURL: "https://api.moonshot.ai/v1", keyEnv: "MOONSHOT_API_KEY", keyRequired: true, model: "kimi-k2.5",
		// platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model: keep
		// every reasoning_content in the context for multi-step tool use.
		reasoning: llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsAll},
	},
	"mistral": {
		display: "Mistral", typ: llm.TypeOpenAICompatible,
		baseURL: "https://api.mistral.ai/v1", keyEnv: "MISTRAL_API_KEY", keyRequired: true, model: "devstral-medium-latest",
		// Mistral refuses fields it does not define (422).
		noStreamOptions: true,
	},
	"codestral": {
		display: "Codestral", typ: llm.TypeOpenAICompatible,
		baseURL: "https://codestral.mistral.ai/v1", keyEnv: "CODESTRAL_API_KEY", keyRequired: true, model: "codestral-latest",
		noStreamOptions: true,
	},
	"groq": {
		display: "Groq", typ: llm.TypeOpenAICompatible,
		baseURL: "https://api.groq.com/openai/v1", keyEnv: "GROQ_API_KEY", keyRequired: true, model: "openai/gpt-oss-120b",
	},
	"together": {
		display: "Together AI", typ: llm.TypeOpenAICompatible,
		baseURL: "https://api.together.xyz/v1", keyEnv: "TOGETHER_API_KEY", keyRequired: true, model: "openai/gpt-oss-120b",
	},
	"fireworks": {
		display: "Fireworks AI", typ: llm.TypeOpenAICompatible,
		baseURL: "https://api.fireworks.ai/inference/v1", keyEnv: "FIREWORKS_API_KEY", keyRequired: true,
		model: "accounts/fireworks/models/gpt-oss-120b",
	},
	"xai": {
		display: "xAI", typ: llm.TypeOpenAI, api: APIResponses,
		baseURL: "https://api.x.ai/v1", keyEnv: "XAI_API_KEY", keyRequired: true, model: "grok-4",
		// docs.x.ai/developers/model-capabilities/text/best-practices: use
		// the Responses API and send the encrypted reasoning back each
		// turn; Chat Completions has no field for it.
	},
	"gemini": {
		display: "Google Gemini", typ: llm.TypeOpenAICompatible,
		baseURL: "https://generativelanguage.googleapis.com/v1beta/openai", keyEnv: "GEMINI_API_KEY", keyRequired: true,
		model: "gemini-2.5-pro",
		// ai.google.dev/gemini-api/docs/thought-signatures: pass the
		// signatures back with the function calls (required by Gemini 3).
		toolCallExtra: true,
	},
	"azure": {
		display: "Azure OpenAI", typ: llm.TypeOpenAI, api: APIChat,
		baseURLEnv: "AZURE_OPENAI_ENDPOINT", keyEnv: "AZURE_OPENAI_API_KEY", keyRequired: true,
		auth: "azure",
	},
	"bedrock": {
		display: "Amazon Bedrock", typ: llm.TypeAnthropic,
		model: "anthropic.claude-sonnet-4-5-20250929-v1:0", auth: "bedrock",
	},
	"vertex": {
		display: "Google Vertex AI", typ: llm.TypeAnthropic,
		model: "claude-sonnet-4-5@20250929", auth: "vertex",
	},
}

// PresetNames lists the providers darman knows by name, in the order
// doctor shows them: the first-party APIs, the routers and hosts, the
// clouds, then the local servers.
func PresetNames() []string {
	return []string{
		"anthropic", "openai", "openrouter",
		"deepseek", "zai", "moonshot", "mistral", "codestral", "groq", "together", "fireworks", "xai", "gemini",
		"azure", "bedrock", "vertex",
		"ollama", "lmstudio", "vllm", "llamacpp",
	}
}

// PresetInfo is what darman knows about a preset, for doctor and the docs.
type PresetInfo struct {
	Name, Display string
	Type          llm.Type
	// API is the wire API: "anthropic", "openai-responses" or "openai-chat".
	API string
	// BaseURL is the default address; empty when it is the user's
	// (Azure's resource endpoint).
	BaseURL string
	// BaseURLEnv and KeyEnv are the environment variables read.
	BaseURLEnv, KeyEnv string
	// Auth says how requests are authorised, in words.
	Auth string
	// Reasoning says what goes back of earlier reasoning.
	Reasoning string
	// Usage says how the server counts cached prompt tokens.
	Usage string
	// Models are the catalog's models of the preset, sorted.
	Models []string
}

// Presets describes every preset, in PresetNames' order.
func Presets() []PresetInfo {
	var out []PresetInfo
	for _, name := range PresetNames() {
		p := presets[name]
		info := PresetInfo{Name: name, Display: p.display, Type: p.typ, BaseURL: p.baseURL,
			BaseURLEnv: p.baseURLEnv, KeyEnv: p.keyEnv}
		info.API = presetAPI(p)
		switch p.auth {
		case "azure":
			info.Auth = "api-key header; deployments and api-version"
		case "bedrock":
			info.Auth = "AWS credentials (SigV4) or AWS_BEARER_TOKEN_BEDROCK"
		case "vertex":
			info.Auth = "Google application default credentials"
		default:
			if p.keyEnv != "" {
				info.Auth = "API key"
			} else {
				info.Auth = "none"
			}
		}
		switch info.API {
		case llm.OriginAnthropic:
			info.Reasoning = "thinking blocks sent back with their signatures"
		case llm.OriginResponses:
			info.Reasoning = "encrypted reasoning items sent back"
		default:
			info.Reasoning = p.reasoning.String()
			if p.toolCallExtra {
				info.Reasoning += "; thought signatures sent back with tool calls"
			}
			if p.openWeights {
				info.Reasoning += "; gpt-oss models: " + gptOSSReturn(name).String()
			}
		}
		switch {
		case info.API != llm.OriginChat:
			info.Usage = "cached tokens reported apart (API's own fields)"
		case p.cachedApart:
			info.Usage = "prompt_tokens exclude cached tokens"
		default:
			info.Usage = "prompt_tokens include cached tokens (checked against total_tokens)"
		}
		for _, m := range llm.BuiltinCatalog().PresetModels(name) {
			info.Models = append(info.Models, m.ID)
		}
		sort.Strings(info.Models)
		out = append(out, info)
	}
	return out
}

func presetAPI(p preset) string {
	switch {
	case p.typ == llm.TypeAnthropic:
		return llm.OriginAnthropic
	case p.typ == llm.TypeOpenAI && p.api != APIChat:
		return llm.OriginResponses
	}
	return llm.OriginChat
}

// gptOSSReturn is the harmony rule for gpt-oss on an open-weights server
// (cookbook.openai.com/articles/gpt-oss/handle-raw-cot: "reasoning" on
// Chat Completions, kept until the next final answer). llama.cpp's server
// reads it as reasoning_content.
func gptOSSReturn(server string) llm.ReasoningReturn {
	if server == "llamacpp" {
		return llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsCurrent}
	}
	return llm.ReasoningReturn{Field: llm.ReturnReasoning, Turns: llm.TurnsCurrent}
}

// familyReturn is the rule of a model family that wants its reasoning back,
// wherever it is served, by the model id ("deepseek-reasoner",
// "deepseek/deepseek-v3.2", "z-ai/glm-4.6", "kimi-k2-thinking"): what the
// family's own API documents (the presets above), which routers pass
// through. ok is false for the other families.
func familyReturn(model string) (r llm.ReasoningReturn, ok bool) {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "deepseek"):
		return llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsToolCalls}, true
	case strings.Contains(m, "glm"), strings.Contains(m, "kimi"):
		return llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsAll}, true
	case isGPTOSS(m):
		// A router forwards reasoning_content, as vLLM and llama.cpp read it.
		return llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsCurrent}, true
	case strings.Contains(m, "qwq"), strings.Contains(m, "qwen") && strings.Contains(m, "thinking"):
		// Qwen's chat template keeps the reasoning of the turn in progress.
		return llm.ReasoningReturn{Field: llm.ReturnReasoningContent, Turns: llm.TurnsCurrent}, true
	}
	return llm.ReasoningReturn{}, false
}

// isGPTOSS reports whether a model id names OpenAI's open-weight models,
// wherever they are served ("gpt-oss:20b", "openai/gpt-oss-120b").
func isGPTOSS(model string) bool { return strings.Contains(strings.ToLower(model), "gpt-oss") }
