// Package wire is what darman's wire families (agent/llm/anthropic,
// agent/llm/openai) share of talking to a model server: the [Transport]
// (server, key, headers, idle timeout), the small HTTP client
// [APIClient] whose error statuses come back as [*StatusError], the
// server-sent events decoder, the reading of an event's JSON, the
// classification helpers every API's errors need, and [Ending], the one
// way a stream ends.
//
// It knows no API of its own: what a request carries and what an event
// means belong to the families.
package wire
