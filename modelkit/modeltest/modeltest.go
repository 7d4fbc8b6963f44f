// Package modeltest is the conformance suite for [runlet.Model]
// implementations, as testing/slogtest is for slog handlers and
// store/storetest for stores: every adapter in this module and every fake
// model runs it, and so can any third-party provider.
//
// A model that speaks a wire protocol runs it against a fake server of that
// protocol (package runlettest's, on loopback), in one line:
//
//	func TestConformance(t *testing.T) {
//		modeltest.Run(t, modeltest.AnthropicWire, func(t *testing.T, s modeltest.Server) runlet.Model {
//			return anthropic.NewMessages(anthropic.Config{
//				BaseURL: s.BaseURL, APIKey: s.APIKey, HTTPClient: s.HTTPClient,
//				MaxResponseBytes: s.MaxResponseBytes, MaxRetries: -1,
//			})
//		})
//	}
//
// The suite checks what the runtime relies on:
//
//   - Terminal: a stream ends with exactly one terminal event, a
//     StreamDone carrying the response or an error, and yields nothing
//     after it, whether the consumer keeps ranging or stops there.
//   - Break: a consumer that stops ranging stops the stream at once, and
//     the HTTP response body is closed.
//   - Cancel: cancelling the context mid-stream ends the stream with the
//     context's error (never a StreamDone) and closes the body; a call
//     with a cancelled context fails with it and sends nothing.
//   - Agree: Generate and Stream give the same text, reasoning, tool
//     calls, finish reason and usage for the same scripted exchange, as
//     scripted (usage included), and a stream's deltas add up to its
//     response.
//   - Errors: a request the adapter cannot build fails before sending with
//     a *runlet.ProviderError wrapping runlet.ErrInvalidRequest; a stream
//     cut off (cleanly or by a reset) after its first deltas, or a
//     non-streamed body cut off halfway, with one wrapping
//     runlet.ErrStreamIncomplete; a response past
//     Server.MaxResponseBytes with one wrapping runlet.ErrResponseTooLarge.
//   - Credentials: the server requires Server.APIKey, and no error the
//     suite sees (including one whose body echoes the key, and one for a
//     wrong key) contains it.
//
// Goroutines the model leaks are not counted here: run
// go.uber.org/goleak's VerifyTestMain in the package's TestMain, as this
// module's adapters do.
//
// An in-process model (a fake, a model that wraps a local library) runs
// [RunScripted] instead: the checks that need no server (Terminal, Break,
// Cancel, Agree) against a model that answers a given response.
// [CheckStream] runs the Terminal and delta checks on any other stream,
// such as an adapter's recorded traffic.
package modeltest

import (
	"net/http"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// Server is what the model under test must be configured with.
type Server struct {
	// BaseURL is the fake server's root (an adapter's base URL).
	BaseURL string
	// APIKey is the key the server requires, sent the way the wire
	// expects it. The suite looks for it in every error.
	APIKey string
	// HTTPClient must send the model's requests: the suite watches
	// through it that every response body is closed.
	HTTPClient *http.Client
	// MaxResponseBytes is the response size limit the model must enforce
	// (past it, ErrResponseTooLarge).
	MaxResponseBytes int64
}

// A Wire starts a fake server of one wire protocol, scripted with
// runlettest's provider-neutral replies and faults; the suite closes it.
// A provider with a wire of its own implements runlettest.WireServer for
// it. The suite injects one fault per request, so the model must not
// retry (MaxRetries: -1 for this module's adapters).
type Wire func() runlettest.WireServer

// OpenAIChatWire starts a fake OpenAI Chat Completions server.
func OpenAIChatWire() runlettest.WireServer { return runlettest.NewOpenAIChatServer() }

// OpenAIResponsesWire starts a fake OpenAI Responses server.
func OpenAIResponsesWire() runlettest.WireServer { return runlettest.NewOpenAIResponsesServer() }

// AnthropicWire starts a fake Anthropic Messages server.
func AnthropicWire() runlettest.WireServer { return runlettest.NewAnthropicServer() }

// GeminiWire starts a fake Gemini API server.
func GeminiWire() runlettest.WireServer { return runlettest.NewGeminiServer() }

// Run runs the suite against the models newModel returns, talking to
// fake servers that wire starts. newModel is called once or more per
// subtest, with that subtest's t and a fresh server.
func Run(t *testing.T, wire Wire, newModel func(t *testing.T, s Server) runlet.Model) {
	t.Helper()
	t.Run("Terminal", func(t *testing.T) { wireTerminal(t, newHarness(t, wire, newModel)) })
	t.Run("Break", func(t *testing.T) { wireBreak(t, newHarness(t, wire, newModel)) })
	t.Run("Cancel", func(t *testing.T) { wireCancel(t, newHarness(t, wire, newModel)) })
	t.Run("Agree", func(t *testing.T) { wireAgree(t, newHarness(t, wire, newModel)) })
	t.Run("Errors", func(t *testing.T) { wireErrors(t, newHarness(t, wire, newModel)) })
	t.Run("Credentials", func(t *testing.T) { wireCredentials(t, newHarness(t, wire, newModel)) })
}

// RunScripted runs the checks that need no server (Terminal, Break,
// Cancel, Agree) against an in-process model. newModel returns a model
// that answers every call with resp: in Stream, its parts as deltas (at
// least one per part) and then a StreamDone with resp.
func RunScripted(t *testing.T, newModel func(t *testing.T, resp *runlet.ModelResponse) runlet.Model) {
	t.Helper()
	t.Run("Terminal", func(t *testing.T) { scriptedTerminal(t, newModel(t, scriptedResponse())) })
	t.Run("Break", func(t *testing.T) { scriptedBreak(t, newModel(t, scriptedResponse())) })
	t.Run("Cancel", func(t *testing.T) { scriptedCancel(t, newModel(t, scriptedResponse())) })
	t.Run("Agree", func(t *testing.T) { scriptedAgree(t, newModel(t, scriptedResponse())) })
}
