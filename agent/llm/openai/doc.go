// Package openai speaks OpenAI's HTTP APIs for package llm: the Responses
// API (responses.go), Chat Completions on OpenAI and every compatible
// server (chat.go: Ollama, LM Studio, vLLM, llama.cpp, OpenRouter,
// DeepSeek, Gemini...; what each server wants back of earlier reasoning,
// chat_reasoning.go; how it counts cached tokens, chat_usage.go), Azure
// OpenAI's deployments (azure.go), and the fill-in-the-middle APIs of code
// completion (fim.go: legacy completions, Ollama's generate, llama.cpp's
// infill, Mistral's FIM).
//
// [NewResponses], [NewChat] and [NewFIM] make the wires; only the provider
// constructor (agent/llm/provider) calls them, with what its presets know
// of each server ([Chat], [ChatBehaviour]).
package openai
