// Package anthropic speaks Anthropic's Messages API for package llm: the
// request body (a small JSON writer of its own, body.go), the event
// stream's translation into [llm.Event]s (stream.go), the API's errors,
// and the same API behind Amazon Bedrock (SigV4 or a Bedrock API key, AWS's
// event stream framing) and Google Vertex AI (a Google access token).
//
// [New], [NewBedrock] and [NewVertex] make an [llm.Wire]; only the provider
// constructor (agent/llm/provider) calls them, with the credentials it
// found (agent/llm/cloudcreds).
package anthropic
