// Package demo is the recorded session that the runlet command and the
// examples replay when no provider is configured: a real OpenAI Chat
// Completions exchange, replayed offline through the real adapter and
// runtime. It is demo plumbing, kept out of runlettest's API: a test
// replays its own recording with runlettest.LoadCassette.
package demo

import (
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/runlet/runlet/runlettest"
)

// Question is the question of the recorded session.
const Question = "What is the capital of the UK? Use the tool, then answer."

//go:embed data/uk-capital.cassette.json
var cassette []byte

// Cassette returns the bundled recording of a real OpenAI Chat Completions
// session (gpt-4o-mini, streamed): asked Question with one tool,
// get_capital ({"country": string}), the model calls
// get_capital({"country":"UK"}); given the result "London" it answers
// "The capital of the UK is London." Two requests to
// POST /v1/chat/completions, replayed in that order; data/PROVENANCE.md
// says where the traffic comes from.
//
// Each call returns a fresh copy.
func Cassette() *runlettest.Cassette {
	c, err := runlettest.ParseCassette(cassette)
	if err != nil {
		panic("demo: bundled cassette: " + err.Error())
	}
	return c
}

// Pacing is the pause between streamed events that makes the replayed
// answer arrive as it did live.
const Pacing = 25 * time.Millisecond

// GoLive says how to talk to a live model instead of the recording.
const GoLive = "to go live, set OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama)"

// ErrEnd is wrapped by the error of a request the recording has no answer
// for: a second question, a retry of a structured answer, a second call of
// an agent served over MCP.
var ErrEnd = errors.New("demo: the offline recording has no more answers")

// EndError is the error of a request past the end of the recording. It
// says what the recording is and how to go live, and is final: the
// adapters do not retry it.
type EndError struct {
	// Request is the number of the request, from 1; the recording answers
	// requests 1 and 2.
	Request int
	cause   error
}

func (e *EndError) Error() string {
	return fmt.Sprintf("this is an offline replay: the recording answers one recorded question (%q, in %d requests), and has no answer for request %d; %s",
		Question, recorded, e.Request, GoLive)
}

// Unwrap returns ErrEnd and runlettest.ErrCassetteEnd.
func (e *EndError) Unwrap() []error { return []error{ErrEnd, e.cause} }

// Retryable reports false: asking again cannot find an answer the recording
// lacks.
func (e *EndError) Retryable() bool { return false }

// recorded is the number of requests Cassette answers.
const recorded = 2

// Client returns an HTTP client that replays Cassette, whatever the
// requests ask (runlettest.IgnoreBody), paced. Give it to an OpenAI Chat
// Completions adapter (openai.Config.HTTPClient) with an agent that has a
// get_capital tool. Requests after the second fail with an *EndError.
func Client() *http.Client {
	return &http.Client{Transport: NewReplayer()}
}

// Replayer is a paced replayer of Cassette that ignores request bodies;
// requests past the end of the recording fail with an *EndError.
type Replayer struct {
	*runlettest.Replayer
	requests atomic.Int64
}

// NewReplayer returns a Replayer, for callers that want to ask it what
// remains.
func NewReplayer() *Replayer {
	return &Replayer{Replayer: runlettest.NewReplayer(Cassette(), runlettest.IgnoreBody(), runlettest.WithPacing(Pacing))}
}

// RoundTrip implements http.RoundTripper.
func (r *Replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	n := r.requests.Add(1)
	resp, err := r.Replayer.RoundTrip(req)
	if errors.Is(err, runlettest.ErrCassetteEnd) {
		return nil, &EndError{Request: int(n), cause: err}
	}
	return resp, err
}
