// Package llmtest is the scripted model server: the one fake in darman's
// tests. It listens on 127.0.0.1, speaks the real wire formats of the three
// APIs darman uses, and answers from a script, so every test above it (the
// agent loop, the LSP front, the VS Code extension end to end) runs the real
// SDK code offline and deterministically.
//
// # Endpoints
//
//	POST /v1/messages          Anthropic Messages, streamed (SSE) or not
//	POST /v1/chat/completions  OpenAI Chat Completions, streamed or not
//	POST /v1/responses         OpenAI Responses, streamed or not
//	POST /model/{model}/invoke-with-response-stream
//	                           Anthropic Messages as Amazon Bedrock serves it:
//	                           the model in the path, the events in an AWS
//	                           event stream (application/vnd.amazon.eventstream)
//	POST .../publishers/anthropic/models/{model}:streamRawPredict
//	                           Anthropic Messages as Google Vertex AI serves it
//	POST /v1/completions       OpenAI's legacy completions with suffix (FIM)
//	POST /api/generate         Ollama's native generate with suffix, NDJSON
//	POST /infill, /completion  llama.cpp's infill and raw completion
//	POST /v1/fim/completions   Mistral's FIM (Codestral), Chat Completions' shape
//	GET  /v1/models            the script's Models, readable by both SDKs
//	GET  /llmtest/calls        the calls received so far, as JSON
//	PUT  /llmtest/script       replace the script (a JSON script body)
//
// Streams carry what the real APIs send. Anthropic: message_start, ping,
// content_block_start (thinking, text, tool_use), content_block_delta
// (thinking_delta and signature_delta, text_delta, input_json_delta),
// content_block_stop, message_delta with stop_reason and usage,
// message_stop. Chat Completions: chunks with delta.reasoning_content,
// delta.content and delta.tool_calls[i] argument fragments, the
// finish_reason chunk, the usage chunk when stream_options.include_usage is
// set, and [DONE]. Responses: response.created, output_item.added/done for
// reasoning (with encrypted_content), message and function_call items,
// reasoning_summary_text, output_text and function_call_arguments deltas,
// response.completed (or response.incomplete) with the usage.
//
// # In a Go test
//
//	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{
//		{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{
//			{Name: "read", Arguments: json.RawMessage(`{"path":"main.go"}`)},
//		}},
//		{Text: "main.go holds an empty main function."},
//	}})
//
// Point darman at it: the Anthropic base URL is srv.URL, the OpenAI and
// OpenAI-compatible base URL is srv.OpenAIURL() (srv.URL + "/v1"). In
// darman's config that is, for example,
//
//	{"model": "anthropic/claude-sonnet-4-5",
//	 "provider": {"anthropic": {"baseURL": "<srv.URL>", "apiKey": "test"}}}
//
// or "ollama/any-model" with {"ollama": {"baseURL": "<srv.URL>/v1"}}.
//
// # Scripts
//
// The k-th model call of a conversation gets step k, where k is the number
// of assistant turns in the request: the first call of a conversation has
// none and gets Steps[0]; once darman appended the model's first answer
// and the tool results, the next call gets Steps[1]. The server keeps no
// session: any request replaying a conversation gets the same step.
// Conversations lets one script serve several conversations at once,
// chosen by a substring of their first user message; Reply chooses answers
// with Go code instead.
//
// A step with Events streams them as written instead: fixtures copied from
// a server's documentation (DeepSeek's reasoning_content chunks,
// OpenRouter's reasoning_details fragments, a usage block), so that a test
// replays the exact shapes a server sends.
//
// A Step streams, in order, its Reasoning, its Text (split into words, into
// Chunks pieces, or as TextChunks) and its ToolCalls (arguments in Chunks
// fragments, interleaved across calls with Interleave for Chat
// Completions), then the stop reason and Usage. Delay paces the events.
//
// # Faults
//
// A step's Faults break its attempts in order; each breaks Times attempts
// (1 by default, every attempt when negative), then the next takes over,
// and attempts past them all get the answer. So "429 once, then answer" is
//
//	Faults: []llmtest.Fault{{Kind: llmtest.FaultStatus, Status: 429, RetryAfterMs: "20"}}
//
// Kinds: FaultStatus answers with an HTTP error in the API's format (401,
// 404, 429 with retry-after, 500, 529 overloaded...). FaultCut drops the
// connection after After events, FaultStall stops sending until the client
// leaves, FaultMalformed sends an event whose JSON is cut off,
// FaultErrorEvent sends the API's in-stream error (Anthropic's
// overloaded_error event by default), and FaultNoStream answers a streaming
// request with plain JSON, as servers that ignore "stream": true do.
//
// # Fill-in-the-middle
//
// The code completion APIs (fim.go: APICompletions, APIGenerate, APIInfill,
// APIFIM) answer from the same steps, streamed (SSE; NDJSON for Ollama) or
// not, with the same faults. A FIM call has no conversation: Reply chooses
// its step when set, else the first step of the first conversation whose
// Match is in the call's prompt or suffix, else Steps[k] for the k-th FIM
// call (the last step once k is past the end). Call.Conversation is the
// prompt (llama.cpp's input_prefix).
//
// # Asserting on what darman sent
//
// srv.ModelCalls() lists the model calls in order. A Call has the request's
// headers and raw body, the step and attempt it got, and Get, which reads
// the body with a gjson path:
//
//	c := srv.ModelCalls()[1]
//	c.Get("system.0.cache_control.type")           // "ephemeral"
//	c.Get("messages.2.content.0.tool_use_id")      // the call it answers
//	c.Get("tools.#.name")                          // ["read","list"]
//
// c.ClientGone() is closed when the client went away mid-answer, which is
// how tests see that cancelling a turn closes the connection.
//
// # From another process
//
// Tests that run darman as a separate process (the LSP front through an
// editor, the VS Code extension end to end) start cmd/scripted-model:
//
//	go run ./cmd/scripted-model -stdin-eof-exit script.json
//
// It prints the base URL on the first line of its standard output and
// serves until it is killed (or, with -stdin-eof-exit, until its standard
// input closes, so a crashed test leaves no server behind). The script
// file is the JSON form of Script:
//
//	{
//	  "models": ["qwen3:8b"],
//	  "steps": [
//	    {"reasoning": "The user wants the file.", "text": "Let me look.",
//	     "toolCalls": [{"name": "read", "arguments": {"path": "main.go"}}]},
//	    {"text": "It holds an empty main function.", "delay": "20ms",
//	     "faults": [{"kind": "status", "status": 529}]}
//	  ]
//	}
//
// Give darman the URL through its config, e.g.
// DARMAN_CONFIG_CONTENT='{"model":"anthropic/claude-sonnet-4-5","provider":{"anthropic":{"baseURL":"http://127.0.0.1:PORT","apiKey":"test"}}}',
// then read GET /llmtest/calls to assert on the requests, and PUT
// /llmtest/script to change the answers between scenarios.
package llmtest
