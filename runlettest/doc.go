// Package runlettest helps test code that uses Runlet, as net/http/httptest
// helps test HTTP code: a scripted fake Model, fake wire servers that speak
// the providers' real protocols on loopback (with injected faults), and an
// HTTP record/replay transport.
//
// Every fake wire server (OpenAIChatServer, OpenAIResponsesServer,
// AnthropicServer, GeminiServer) is a WireServer: it takes provider-neutral WireReply
// scripts (EnqueueReplies, SetReplyResponder), has BaseURL, InjectFault,
// RequireAPIKey and Requests, and shares the same defaults: DefaultChunkSize
// runes per streamed delta, EstimateUsage for a reply without usage, and
// ErrorStatus for an error without a status. A reply's reasoning
// (WireReply.Reasoning) and a refusal (WireRefusal) look on each server as
// on the real wire, reasoning tokens counted where the protocol counts
// them. Each also has its own reply type for what only its protocol can
// express.
package runlettest
