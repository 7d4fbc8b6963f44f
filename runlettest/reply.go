package runlettest

import (
	"net/http"
	"unicode/utf8"

	"github.com/runlet/runlet"
)

// WireReply is one scripted answer in provider-neutral terms. Every fake
// wire server (OpenAIChatServer, OpenAIResponsesServer, AnthropicServer,
// GeminiServer, and any later one) accepts it through EnqueueReplies and
// SetReplyResponder, and renders it in its own protocol, as JSON or as an
// event stream, so one script drives the same test against every adapter:
//
//	for _, srv := range []runlettest.WireServer{chat, responses, anthropic, gemini} {
//		srv.EnqueueReplies(runlettest.WireReply{Text: "Hello!"})
//	}
//
// Each server also has its own reply type (OpenAIChatReply, ResponsesTurn,
// AnthropicResponse, GeminiResponse) for what only its protocol can say. The defaults are
// the same on every server: see DefaultChunkSize, EstimateUsage and
// ErrorStatus.
type WireReply struct {
	// ID and Model default to a generated ID and the request's model.
	ID, Model string
	// Reasoning is the model's reasoning before the answer. Every fake
	// server sends it, and counts its tokens where the protocol does (when
	// Usage is nil, an estimate: about four runes a token):
	//   - OpenAIChatServer: reasoning_content deltas (or the message's
	//     field); usage.completion_tokens_details.reasoning_tokens.
	//   - OpenAIResponsesServer: a reasoning item with one summary part;
	//     usage.output_tokens_details.reasoning_tokens.
	//   - AnthropicServer: a thinking block; its tokens are part of
	//     output_tokens, as the API has no separate count.
	//   - GeminiServer: a thought part (thought: true);
	//     usageMetadata.thoughtsTokenCount, outside candidatesTokenCount.
	Reasoning string
	// ReasoningSignature is the opaque token that goes with the reasoning:
	// the Responses item's encrypted_content, the Anthropic thinking
	// block's signature, the Gemini thought's thoughtSignature. Chat
	// Completions has none.
	ReasoningSignature string
	// Text is the answer.
	Text string
	// Refusal, when set, is the model declining, as each protocol says it
	// (see WireRefusal): the message's refusal field, streamed as refusal
	// deltas (Chat Completions), or a refusal content part (Responses),
	// both read as runlet.FinishRefusal with the refusal as the text;
	// stop_reason "refusal" with stop_details {"type": "refusal",
	// "explanation": Refusal} (Anthropic, whose refusals come from its
	// streaming classifiers: Text, if any, is the answer cut short, and
	// no refusal text is in the content). Gemini's wire has no refusal:
	// GeminiServer sends Refusal as the answer's text, finish STOP.
	Refusal string
	// ToolCalls are the function calls, after the text, in order. An empty
	// ID is generated.
	ToolCalls []WireToolCall
	// Finish is the finish reason: empty means runlet.FinishToolCalls when
	// there are tool calls, else runlet.FinishStop. FinishLength and
	// FinishContentFilter become the protocol's own reasons (length /
	// max_tokens / max_output_tokens, content_filter / refusal).
	Finish runlet.FinishReason
	// Usage is reported as given; nil reports EstimateUsage.
	Usage *WireUsage
	// Error, when set, is the answer instead: for a non-streaming request
	// an HTTP error (Error.Status, see ErrorStatus) in the protocol's error
	// envelope; for a stream an error event after ErrorAfter events (or in
	// place of the terminal event, if the stream has fewer), on an HTTP 200
	// stream, as the APIs report failures that happen mid-stream.
	Error      *WireError
	ErrorAfter int
	// Body, when set, is sent verbatim instead (as text/event-stream when
	// the request streams, else as application/json): a recorded response
	// to replay, or a malformed one.
	Body []byte
}

// WireRefusal returns a reply in which the model declines with text, as
// WireReply.Refusal says for each server:
//
//	srv.EnqueueReplies(runlettest.WireRefusal("I can't help with that."))
func WireRefusal(text string) WireReply { return WireReply{Refusal: text} }

// estimateTokens is the estimate of texts' tokens: about four runes a
// token, at least one for any text.
func estimateTokens(texts ...string) int {
	n := 0
	for _, s := range texts {
		n += utf8.RuneCountInString(s)
	}
	if n == 0 {
		return 0
	}
	return n/4 + 1
}

// WireToolCall is one scripted function call; Arguments is its JSON text.
type WireToolCall struct {
	ID, Name, Arguments string
}

// WireUsage is a scripted reply's token usage.
type WireUsage struct {
	InputTokens, OutputTokens, ReasoningTokens, CachedTokens int
}

// WireError is a scripted error answer, the same on every fake server. A
// zero Status is ErrorStatus(Type, Code). Code is not part of every
// protocol's envelope (Anthropic has none).
type WireError struct {
	Status              int
	Type, Code, Message string
}

// WireServer is what every fake wire server offers, so a test can run one
// script against every adapter.
type WireServer interface {
	// BaseURL is the root to configure the adapter with (Config.BaseURL).
	BaseURL() string
	// EnqueueReplies appends provider-neutral replies to the script.
	EnqueueReplies(replies ...WireReply)
	// SetReplyResponder answers requests once the script is used up.
	SetReplyResponder(f func(WireRequest) WireReply)
	// InjectFault queues faults, one per request.
	InjectFault(f ...Fault)
	// RequireAPIKey makes the server answer 401 unless the request has key.
	RequireAPIKey(key string)
	// Requests returns the requests received so far.
	Requests() []WireRequest
	// Close shuts the server down.
	Close()
}

var (
	_ WireServer = (*OpenAIChatServer)(nil)
	_ WireServer = (*OpenAIResponsesServer)(nil)
	_ WireServer = (*AnthropicServer)(nil)
)

// DefaultChunkSize is the number of runes per streamed delta (text,
// reasoning, tool arguments) when a server's ChunkSize is zero.
const DefaultChunkSize = 4

// chunkSize resolves a server's and a reply's ChunkSize: the reply's when
// set, else the server's, else DefaultChunkSize; negative means one delta
// per string.
func chunkSize(server, reply int) int {
	switch {
	case reply != 0:
		return reply
	case server != 0:
		return server
	}
	return DefaultChunkSize
}

// EstimateUsage is the usage a fake server reports for a reply without
// one: about four bytes of request body per input token and four runes of
// output (text, reasoning, tool names and arguments) per output token.
func EstimateUsage(requestBytes int, output ...string) WireUsage {
	n := 0
	for _, s := range output {
		n += utf8.RuneCountInString(s)
	}
	return WireUsage{InputTokens: requestBytes/4 + 1, OutputTokens: n/4 + 1}
}

// ErrorStatus is the HTTP status of an error answer without one: 429 for
// rate limits, 529 for overload, 400 for invalid requests, 401, 403 and
// 404 for authentication, permission and not-found errors, else 500.
func ErrorStatus(typ, code string) int {
	switch {
	case code == "rate_limit_exceeded" || typ == "rate_limit_error" || typ == "rate_limit_exceeded":
		return http.StatusTooManyRequests
	case typ == "overloaded_error":
		return 529
	case typ == "invalid_request_error":
		return http.StatusBadRequest
	case typ == "authentication_error" || code == "invalid_api_key":
		return http.StatusUnauthorized
	case typ == "permission_error":
		return http.StatusForbidden
	case typ == "not_found_error":
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// status returns e.Status or its default.
func (e *WireError) status() int {
	if e.Status != 0 {
		return e.Status
	}
	return ErrorStatus(e.Type, e.Code)
}

// finish resolves a reply's finish reason.
func (r *WireReply) finish() runlet.FinishReason {
	switch {
	case r.Finish != "":
		return r.Finish
	case len(r.ToolCalls) > 0:
		return runlet.FinishToolCalls
	}
	return runlet.FinishStop
}
