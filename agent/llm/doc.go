// Package llm is darman's conversation with a language model: one streaming
// interface ([Provider], [*Client]) and its vocabulary — requests,
// messages and their parts, the stream and its events, typed errors,
// fill-in-the-middle requests, images — and the model catalog.
//
// The wires that speak it live below: agent/llm/anthropic (Anthropic's
// Messages API, also on Amazon Bedrock and Google Vertex AI) and
// agent/llm/openai (OpenAI's Responses API, Chat Completions on every
// OpenAI-compatible server such as Ollama, LM Studio, vLLM, llama.cpp's
// server and OpenRouter, and the FIM APIs), each a [Wire] (and a [FIMWire]);
// agent/llm/cloudcreds finds the clouds' credentials, and
// agent/llm/internal/wire holds the HTTP and SSE plumbing they share.
// Only agent/llm/provider, the one constructor, knows them.
//
// # Where to start
//
// provider.New builds a [Client] for one configured provider;
// provider.Select picks the provider and model when the user configured
// nothing. [Client.Stream] starts one model call and returns a [*Stream]:
//
//	s := client.Stream(ctx, &llm.Request{Model: "claude-sonnet-4-5", ...})
//	defer s.Close()
//	for s.Next() {
//		ev := s.Event()
//		...
//	}
//	if err := s.Err(); err != nil { ... }
//
// [Collect] drains a stream into a [Response] (the assistant message, usage,
// cost and finish reason) for callers that do not render deltas.
//
// # What a stream yields, in order
//
// Zero or more [EventRetry] (the call failed before anything was shown and is
// tried again after a delay), then the content: [EventTextDelta],
// [EventReasoningDelta] and [EventReasoningEnd], [EventToolCallStart],
// [EventToolCallDelta] and [EventToolCallEnd]; then exactly one [EventUsage]
// and one [EventFinish]. Next then returns false and Err reports the terminal
// error, nil when the model finished. A failed stream ends without
// EventUsage/EventFinish. Every content event carries the index of the part of
// the assistant message it belongs to, so parts interleaved by the wire (two
// tool calls whose arguments arrive in alternation) stay apart.
//
// A call is retried, with backoff that honours retry-after, only while
// nothing has been handed to the consumer but retry events: output already
// shown is never duplicated. Afterwards a failure ends the stream with a
// typed [*Error]; errors.Is(err, [ErrContextTooLong]) and friends let callers
// branch on the kind.
//
// Cancelling the context given to Stream, or calling [Stream.Close], aborts
// the HTTP request at once. A stream that receives no bytes for the idle
// timeout fails with [ErrStalled].
//
// # Why no SDK
//
// darman builds each request from a few structs of its own (for Anthropic,
// a small JSON writer: agent/llm/anthropic/body.go), sends it with its own
// client (agent/llm/internal/wire; retries and timeouts are darman's), maps
// error responses itself, and splits the SSE stream into events. The official
// SDKs did that before: openai-go cost 8 MB of the binary and 1.6 ms of
// every start for four endpoints, anthropic-sdk-go 7.9 MB and 20 package
// initializers for one; the requests are the ones they built
// (TestOpenAIBodiesAsTheSDKBuiltThem, TestAnthropicBodiesAsTheSDKBuiltThem).
// darman reads each event's few fields itself instead of the SDKs'
// reflection-decoded union types, which cost ten times as much per
// streamed chunk (docs/providers.md, "Performance").
//
// # What goes back to the model
//
// Each request carries the whole conversation, and each server wants the
// model's earlier output back its own way. Tool-call arguments go back in
// the bytes the model wrote ([ToolCall.Arguments]); Anthropic's thinking
// with its signature, Responses reasoning as encrypted items; on Chat
// Completions, the reasoning fields each preset's server documents
// ([ReasoningReturn]: DeepSeek's reasoning_content on tool-call turns,
// OpenRouter's reasoning_details unchanged, Gemini's thought signatures
// with their calls). provider.Presets describes every preset;
// docs/providers.md says per server what is sent back and why.
//
// # Testing
//
// The model is the only fake in darman's tests, and it speaks the real wire
// formats: package llmtest runs a scripted server on 127.0.0.1 that darman's
// clients talk to (and llmtest's own tests drive it with the official SDKs).
package llm
