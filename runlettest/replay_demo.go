package runlettest

import (
	_ "embed"
	"net/http"
	"time"
)

// DemoQuestion is the question of the session DemoCassette recorded.
const DemoQuestion = "What is the capital of the UK? Use the tool, then answer."

//go:embed replaydata/uk-capital.cassette.json
var demoCassette []byte

// DemoCassette returns the bundled recording of a real OpenAI Chat
// Completions session (gpt-4o-mini, streamed): asked DemoQuestion with one
// tool, get_capital ({"country": string}), the model calls
// get_capital({"country":"UK"}); given the result "London" it answers
// "The capital of the UK is London." Two requests to
// POST /v1/chat/completions, replayed in that order. It is what the
// runlet command and the examples replay when no provider is configured;
// replaydata/PROVENANCE.md says where the traffic comes from.
//
// Each call returns a fresh copy.
func DemoCassette() *Cassette {
	c, err := ParseCassette(demoCassette)
	if err != nil {
		panic("runlettest: bundled demo cassette: " + err.Error())
	}
	return c
}

// DemoClient returns an HTTP client that replays DemoCassette, whatever the
// requests ask (IgnoreBody), pacing the streamed events so the answer
// arrives as it did live. Give it to an OpenAI Chat Completions adapter
// (openai.Config.HTTPClient) with an agent that has a get_capital tool: the
// run then goes through the real adapter and runtime, offline. Requests
// after the second fail with an error wrapping ErrCassetteEnd.
func DemoClient() *http.Client {
	return &http.Client{Transport: NewReplayer(DemoCassette(), IgnoreBody(), WithPacing(25*time.Millisecond))}
}
