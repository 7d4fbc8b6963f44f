// Package demo is the recorded session that the runlet command and the
// examples replay when no provider is configured: a real OpenAI Chat
// Completions exchange, replayed offline through the real adapter and
// runtime. It is demo plumbing, kept out of runlettest's API: a test
// replays its own recording with runlettest.LoadCassette.
package demo

import (
	_ "embed"
	"net/http"
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

// Client returns an HTTP client that replays Cassette, whatever the
// requests ask (runlettest.IgnoreBody), paced. Give it to an OpenAI Chat
// Completions adapter (openai.Config.HTTPClient) with an agent that has a
// get_capital tool. Requests after the second fail with an error wrapping
// runlettest.ErrCassetteEnd.
func Client() *http.Client {
	return &http.Client{Transport: NewReplayer()}
}

// NewReplayer returns a paced replayer of Cassette that ignores request
// bodies, for callers that want to ask it what remains.
func NewReplayer() *runlettest.Replayer {
	return runlettest.NewReplayer(Cassette(), runlettest.IgnoreBody(), runlettest.WithPacing(Pacing))
}
