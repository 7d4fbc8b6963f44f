package bench_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
)

// Allocation tests of the hot paths: a whole two-call tool run (runtime,
// typed tool with schema validation, Chat Completions adapter) with the
// network taken out, so the count is exact and a regression fails a test,
// not just a benchmark. The responses are the fake server's, recorded once
// and replayed from memory.

// replay is a RoundTripper answering from recorded bodies: the first one
// until the request carries a tool result, then the second.
type replay struct {
	bodies [2][]byte
	header http.Header
	buf    bytes.Buffer
}

func (r *replay) RoundTrip(req *http.Request) (*http.Response, error) {
	r.buf.Reset()
	_, _ = r.buf.ReadFrom(req.Body)
	req.Body.Close()
	i := 0
	if bytes.Contains(r.buf.Bytes(), []byte(`"role":"tool"`)) {
		i = 1
	}
	return &http.Response{StatusCode: 200, Header: r.header, Body: io.NopCloser(bytes.NewReader(r.bodies[i])), Request: req}, nil
}

// recordChat records the fake server's two answers to the benchmark's run.
func recordChat(t *testing.T, stream bool) (*replay, *runlet.Agent) {
	srv := e2eServer(t)
	rec := &recorder{}
	agent := runletAgent(srv)
	agent.Model = openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test", Model: "gpt-4o-mini",
		HTTPClient: &http.Client{Transport: rec}})
	if err := runOnce(agent, stream); err != nil {
		t.Fatal(err)
	}
	if len(rec.bodies) != 2 {
		t.Fatalf("%d responses recorded", len(rec.bodies))
	}
	return &replay{bodies: [2][]byte{rec.bodies[0], rec.bodies[1]}, header: rec.header}, agent
}

type recorder struct {
	bodies [][]byte
	header http.Header
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	r.bodies = append(r.bodies, body)
	r.header = resp.Header.Clone()
	r.header.Del("Content-Length")
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

func runOnce(agent *runlet.Agent, stream bool) error {
	rt := runlet.NewRuntime()
	if !stream {
		_, err := rt.Run(context.Background(), agent, "Weather in Shanghai?")
		return err
	}
	for _, err := range rt.Stream(context.Background(), agent, "Weather in Shanghai?") {
		if err != nil {
			return err
		}
	}
	return nil
}

func chatAllocs(t *testing.T, stream bool) float64 {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts (sync.Pool drops items at random)")
	}
	rp, agent := recordChat(t, stream)
	agent.Model = openai.NewChatCompletions(openai.Config{BaseURL: "https://fake.invalid/v1", APIKey: "test", Model: "gpt-4o-mini",
		HTTPClient: &http.Client{Transport: rp}})
	rt := runlet.NewRuntime()
	return testing.AllocsPerRun(50, func() {
		if stream {
			n := 0
			for ev, err := range rt.Stream(context.Background(), agent, "Weather in Shanghai?") {
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := ev.(*runlet.TextDelta); ok {
					n++
				}
			}
			if n != e2eAnswerDeltas {
				t.Fatalf("%d deltas", n)
			}
			return
		}
		res, err := rt.Run(context.Background(), agent, "Weather in Shanghai?")
		if err != nil || len(res.Output) != 4*e2eAnswerDeltas {
			t.Fatal(err, len(res.Output))
		}
	})
}

// Measured with go test -v -run Allocs ./internal/bench (Go 1.26,
// linux/amd64): 172 allocations for the whole non-streamed run, of which 6
// are the replaying transport's (204 before the tool's schema was compiled
// into a quick check and the SSE and header buffers were reused; 158 then,
// 172 since agents can run as tools; 151 once the run loop kept its state
// in one allocation and handed its messages and usage maps to the Result,
// 141 once one tool call ran without a worker and a turn's buffers were
// the run's; 112 with the Chat Completions body fast path; 111 once a
// run stopped formatting each tool's origin, 110 once a call running
// alone used the run's own result slot, 108 with a request and its
// messages in one allocation; 87 with the Chat Completions request body
// written directly, 86 once a turn's tool calls were listed in the run's
// own buffer; 88 since the Result splits the cost by agent, the map of
// Result.CostByAgent).
const maxGenerateAllocs = 88

func TestChatGenerateAllocs(t *testing.T) { checkChatAllocs(t, false, maxGenerateAllocs) }

// Measured as above: 2,218 allocations for the streamed run of 1,000 text
// deltas (about two per delta: the event and its text; 2,274, then 2,248
// and 2,218 before; 2,185 with the Chat Completions chunk fast path,
// 2,184, 2,183, then 2,181; 2,158 with the request body written
// directly, then 2,157; 2,159 with Result.CostByAgent's map; 2,171 with
// each stream's idle watch, six per model call: its timer and callback,
// a cancellable context for the request, the body wrapper).
const maxStreamAllocs = 2171

func TestChatStreamAllocs(t *testing.T) { checkChatAllocs(t, true, maxStreamAllocs) }

func checkChatAllocs(t *testing.T, stream bool, max int) {
	got := chatAllocs(t, stream)
	t.Logf("%.0f allocations per tool run (streamed: %v)", got, stream)
	if got > float64(max) {
		t.Errorf("%.0f allocations per tool run (streamed: %v), want at most %d", got, stream, max)
	}
}

// The hand-written loop's allocations with the same replayed answers, for
// the ratio. Measured as above: Runlet 88, hand-written 119 (the goal was
// no more than the hand-written loop; Runlet is now 31 under it, 33 before
// Result.CostByAgent); the bound is the measured difference, so it cannot
// grow unnoticed.
const maxGenerateAllocsOverHand = -31

func TestChatGenerateAllocsVsHandWritten(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	rp, _ := recordChat(t, false)
	saved := http.DefaultClient.Transport
	http.DefaultClient.Transport = rp
	defer func() { http.DefaultClient.Transport = saved }()
	hand := testing.AllocsPerRun(50, func() {
		if out, err := handLoop("https://fake.invalid/v1", false); err != nil || len(out) != 4*e2eAnswerDeltas {
			t.Fatal(err, len(out))
		}
	})
	got := chatAllocs(t, false)
	t.Logf("non-streamed tool run: Runlet %.0f allocations, hand-written %.0f", got, hand)
	if got > hand+maxGenerateAllocsOverHand {
		t.Errorf("Runlet allocates %.0f per run, the hand-written loop %.0f: more than %d over", got, hand, maxGenerateAllocsOverHand)
	}
}
