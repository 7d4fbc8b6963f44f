package bench_test

import (
	"net/http"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
)

// Allocation tests of the OpenAI Responses adapter's two-call tool run,
// modelled on the others (allocs_test.go, allocs_ag_test.go): the fake
// server's answers recorded once and replayed from memory.

func responsesAllocs(t *testing.T, stream bool) (runletAllocs, hand float64) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts (sync.Pool drops items at random)")
	}
	srv, script := responsesServer(t)
	script()
	agent := responsesAgent(srv)
	rp := recordReplay(t, stream, `"function_call_output"`, func(c *http.Client) runlet.Model {
		return openai.NewResponses(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test", Model: "gpt-5-mini", HTTPClient: c})
	}, agent)
	agent.Model = openai.NewResponses(openai.Config{BaseURL: "https://fake.invalid/v1", APIKey: "test", Model: "gpt-5-mini",
		HTTPClient: &http.Client{Transport: rp}})
	runletAllocs = agentAllocs(t, agent, stream)
	hand = handAllocs(t, rp, func() (string, error) { return responsesHandLoop("https://fake.invalid/v1", stream) })
	t.Logf("Responses tool run (streamed: %v): Runlet %.0f allocations, hand-written %.0f", stream, runletAllocs, hand)
	return runletAllocs, hand
}

// Bounds measured with go test -v -run Allocs ./internal/bench (Go 1.26,
// linux/amd64), the replaying transport's few allocations included; the
// hand-written loop, same replay: 128 non-streamed, 8,268 streamed.
// Adapter-side history, measured on the runtime of the time: 185 -> 132
// non-streamed (2,280 -> 2,253 streamed) with the whole-body fast path and
// the request body written directly. The runtime's own allocations fell
// in between, so the steps do not add up to the bounds; two more each
// since the Result splits the cost by agent (Result.CostByAgent's map);
// streamed, twelve more with each stream's idle watch (six per model call).
const (
	maxResponsesGenerateAllocs = 98
	maxResponsesStreamAllocs   = 2232
)

func TestResponsesGenerateAllocs(t *testing.T) {
	got, _ := responsesAllocs(t, false)
	checkAllocs(t, got, maxResponsesGenerateAllocs)
}

func TestResponsesStreamAllocs(t *testing.T) {
	got, _ := responsesAllocs(t, true)
	checkAllocs(t, got, maxResponsesStreamAllocs)
}
