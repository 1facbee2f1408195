// Package provider builds darman's model clients from the configuration:
// [New] makes the [*llm.Client] of one configured provider from its
// [Settings] (the presets — anthropic, openai, ollama, bedrock... — bring
// their defaults), [Select] picks the provider and model when the user
// configured nothing, and [Check] makes one tiny call for `darman doctor`.
//
// It is the one place that knows every wire: the composition root
// (cmd/darman) calls it, and what it builds is used through package llm's
// [llm.Client] and [llm.Provider].
package provider
