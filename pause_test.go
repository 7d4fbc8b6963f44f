package runlet_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// pausedReply is a response a provider paused in the middle of a hosted
// web search (Anthropic's pause_turn).
func pausedReply() runlettest.Reply {
	msg := hostedMessage()
	msg.Parts = msg.Parts[:1] // the search, no answer yet
	return runlettest.Reply{Response: &runlet.ModelResponse{
		Message: msg, FinishReason: runlet.FinishPause,
		Usage: runlet.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, WebSearchRequests: 1},
	}}
}

// TestPausedTurnContinues: a response that ends with FinishPause is not
// the answer; the run calls the model again with the paused message last
// and no new user message, and returns the answer that finishes the turn.
// The continuation is a model call like any other: it streams and shows
// as ModelStarted and ModelFinished.
func TestPausedTurnContinues(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "run"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			paused := pausedReply()
			m := runlettest.NewModel(paused, runlettest.TextReply("Go 1.26 is out."))
			agent := &runlet.Agent{Name: "a", Model: m, HostedTools: []runlet.HostedTool{runlet.WebSearch()}}
			var res *runlet.Result
			var err error
			var started, finished int
			var text string
			if stream {
				for ev, e := range runlet.NewRuntime().Stream(context.Background(), agent, "news?") {
					if e != nil {
						err = e
						break
					}
					switch ev := ev.(type) {
					case *runlet.ModelStarted:
						started++
					case *runlet.ModelFinished:
						finished++
					case *runlet.TextDelta:
						text += ev.Delta
					case *runlet.RunFinished:
						res = ev.Result
					}
				}
			} else {
				res, err = runlet.NewRuntime().Run(context.Background(), agent, "news?")
			}
			if err != nil {
				t.Fatal(err)
			}
			if res == nil || res.Output != "Go 1.26 is out." || res.Turns != 2 || res.Usage.Requests != 2 || res.Usage.WebSearchRequests != 1 {
				t.Fatalf("result: %+v", res)
			}
			if stream && (started != 2 || finished != 2 || text != "Go 1.26 is out.") {
				t.Fatalf("events: %d ModelStarted, %d ModelFinished, text %q", started, finished, text)
			}
			reqs := m.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			msgs := reqs[1].Messages
			if len(msgs) != 2 || msgs[0].Role != runlet.RoleUser || !reflect.DeepEqual(msgs[1], paused.Response.Message) {
				t.Fatalf("continuation request's messages: %+v", msgs)
			}
			if len(res.Messages) != 3 || !reflect.DeepEqual(res.Messages[1], paused.Response.Message) {
				t.Fatalf("run's messages: %+v", res.Messages)
			}
		})
	}
}

// TestPausedTurnLimits: each continuation counts as a turn and a request,
// so a model that pauses for ever stops at the run's limits with the usual
// typed errors.
func TestPausedTurnLimits(t *testing.T) {
	cases := []struct {
		name   string
		opts   []runlet.RuntimeOption
		agent  func(*runlet.Agent)
		is     error
		policy string
		calls  int
	}{
		{"max turns", nil, func(a *runlet.Agent) { a.MaxTurns = 3 }, runlet.ErrMaxTurns, "max_turns", 3},
		{"requests", []runlet.RuntimeOption{runlet.WithLimits(runlet.UsageLimits{Requests: 4})}, func(*runlet.Agent) {}, runlet.ErrUsageLimit, "usage_limit:requests", 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := runlettest.NewModel()
			m.Func = func(context.Context, *runlet.ModelRequest) runlettest.Reply { return pausedReply() }
			agent := &runlet.Agent{Name: "a", Model: m}
			tc.agent(agent)
			res, err := runlet.NewRuntime(tc.opts...).Run(context.Background(), agent, "news?")
			var pe *runlet.PolicyError
			if !errors.Is(err, tc.is) || !errors.As(err, &pe) || pe.Policy != tc.policy {
				t.Fatalf("err = %v", err)
			}
			if got := len(m.Requests()); got != tc.calls || res == nil || res.Status != runlet.StateFailed || res.Output != "" {
				t.Fatalf("%d model calls, result %+v", got, res)
			}
		})
	}
}

// TestPausedTurnTypedOutput: with an output schema, a paused response is
// not an answer to check (nor to repair): the run continues the turn and
// decodes the answer that finishes it.
func TestPausedTurnTypedOutput(t *testing.T) {
	paused := pausedReply()
	m := runlettest.NewModel(paused, runlettest.TextReply(`{"version":"1.26"}`))
	agent := &runlet.Agent{Name: "a", Model: m}
	res, err := runlet.RunAs[struct {
		Version string `json:"version"`
	}](context.Background(), runlet.NewRuntime(), agent, "news?", runlet.WithOutputRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Version != "1.26" || res.Turns != 2 {
		t.Fatalf("result: %+v", res)
	}
	reqs := m.Requests()
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; !reflect.DeepEqual(last, paused.Response.Message) {
		t.Fatalf("continuation request ends with %+v", last)
	}
}
