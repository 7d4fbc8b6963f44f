package runlet_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// obedient answers as a model does under a forced tool choice: a tool
// call while one is forced, the answer once the choice is its own.
func obedient() *runlettest.Model {
	m := &runlettest.Model{}
	m.Func = func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
		switch req.ToolChoice.Mode {
		case runlet.ToolChoiceRequired, runlet.ToolChoiceTool:
			return runlettest.ToolCallReply(runlettest.Call("", "get_weather", `{"city":"Rome"}`))
		}
		return runlettest.TextReply("Sunny.")
	}
	return m
}

// A forced tool choice holds until the agent has called a tool: the next
// request goes back to auto and the run ends with the model's answer,
// where before it called tools until max turns. KeepToolChoice keeps
// forcing, and a none or auto choice is never changed.
func TestForcedToolChoiceEnds(t *testing.T) {
	auto := runlet.ToolChoice{Mode: runlet.ToolChoiceAuto}
	for _, tc := range []struct {
		name   string
		choice runlet.ToolChoice
		keep   bool
		want   []runlet.ToolChoice // the requests' choices
		err    error
	}{
		{"required", runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}, false,
			[]runlet.ToolChoice{{Mode: runlet.ToolChoiceRequired}, auto}, nil},
		{"named tool", runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "get_weather"}, false,
			[]runlet.ToolChoice{{Mode: runlet.ToolChoiceTool, Name: "get_weather"}, auto}, nil},
		{"kept", runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}, true,
			[]runlet.ToolChoice{{Mode: runlet.ToolChoiceRequired}, {Mode: runlet.ToolChoiceRequired}, {Mode: runlet.ToolChoiceRequired}}, runlet.ErrMaxTurns},
		{"auto", auto, false, []runlet.ToolChoice{auto}, nil},
	} {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprint(tc.name, "/streaming=", streaming), func(t *testing.T) {
				m := obedient()
				agent := &runlet.Agent{Model: m, Tools: []runlet.Tool{weatherTool()}, ToolChoice: tc.choice, KeepToolChoice: tc.keep, MaxTurns: 3}
				res, _, err := runBoth(t, streaming, runlet.NewRuntime(), agent, "weather?")
				if !errors.Is(err, tc.err) || (tc.err == nil && res.Output != "Sunny.") {
					t.Fatalf("output %q err %v, want err %v", res.Output, err, tc.err)
				}
				reqs := m.Requests()
				if len(reqs) != len(tc.want) {
					t.Fatalf("%d requests, want %d", len(reqs), len(tc.want))
				}
				for i, req := range reqs {
					if req.ToolChoice != tc.want[i] {
						t.Errorf("request %d: tool choice %+v, want %+v", i, req.ToolChoice, tc.want[i])
					}
				}
			})
		}
	}
}

// An agent handed the conversation starts with its own forced choice,
// whatever the agent before it called; and a run resumed after an
// interruption knows its agent called tools.
func TestForcedToolChoiceAfterHandoffAndResume(t *testing.T) {
	required := runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}
	t.Run("handoff", func(t *testing.T) {
		bm := obedient()
		billing := &runlet.Agent{Name: "billing", Model: bm, Tools: []runlet.Tool{weatherTool()}, ToolChoice: required}
		tm := obedient()
		triage := &runlet.Agent{Name: "triage", Model: tm, Tools: []runlet.Tool{weatherTool()}, ToolChoice: required,
			Handoffs: []runlet.Handoff{{Agent: billing}}}
		tm.Func = func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
			if len(req.Messages) == 1 {
				return runlettest.ToolCallReply(runlettest.Call("w", "get_weather", `{"city":"Rome"}`))
			}
			return runlettest.ToolCallReply(runlettest.Call("h", "transfer_to_billing", `{}`))
		}
		res, err := runlet.NewRuntime().Run(context.Background(), triage, "refund")
		if err != nil || res.Output != "Sunny." || res.Agent != "billing" {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		if r := tm.Requests(); len(r) != 2 || r[0].ToolChoice != required || r[1].ToolChoice.Mode != runlet.ToolChoiceAuto {
			t.Fatalf("triage's requests %d", len(r))
		}
		if r := bm.Requests(); len(r) != 2 || r[0].ToolChoice != required || r[1].ToolChoice.Mode != runlet.ToolChoiceAuto {
			t.Fatalf("billing's requests %d: %+v", len(r), r[0].ToolChoice)
		}
	})
	t.Run("resume", func(t *testing.T) {
		var deleted []string
		var mu sync.Mutex
		m := obedient()
		m.Func = func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
			if req.ToolChoice.Mode == runlet.ToolChoiceRequired {
				return runlettest.ToolCallReply(runlettest.Call("d", "delete_file", `{"path":"/x"}`))
			}
			return runlettest.TextReply("Deleted.")
		}
		agent := approvalAgent(m, &deleted, &mu)
		agent.ToolChoice = required
		store := runlet.NewMemoryStore()
		res, err := runlet.NewRuntime(runlet.WithStore(store)).Run(context.Background(), agent, "delete /x")
		if err != nil || res.Status != runlet.StateInterrupted {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		res, err = runlet.NewRuntime(runlet.WithStore(store)).Resume(context.Background(), agent, res.RunID, runlet.Approve("d"))
		if err != nil || res.Output != "Deleted." || len(deleted) != 1 {
			t.Fatalf("res=%+v err=%v deleted %v", res, err, deleted)
		}
	})
}

// Typed output keeps its own forcing: in tool mode every request still
// requires a call (a tool or the output tool, which ends the run), after
// tool calls too; in native mode a forced choice ends as in any run, so the
// model can give the typed answer.
func TestForcedToolChoiceWithTypedOutput(t *testing.T) {
	for _, mode := range []runlet.OutputMode{runlet.OutputTool, runlet.OutputNative} {
		t.Run(string(mode), func(t *testing.T) {
			final := runlettest.TextReply(validInvoice)
			if mode == runlet.OutputTool {
				final = runlettest.ToolCallReply(runlettest.Call("c2", "final_answer", validInvoice))
			}
			m := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "weather", `{"city":"Paris"}`)), final)
			agent := &runlet.Agent{Name: "x", Model: m, Tools: []runlet.Tool{weatherTool()},
				ToolChoice:   runlet.ToolChoice{Mode: runlet.ToolChoiceRequired},
				OutputSchema: &runlet.OutputSchema{Name: "inv", Schema: runlet.OutputFor[invoice]().Schema, Mode: mode}}
			res, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "x")
			if err != nil || res.Value.Total != 12.5 {
				t.Fatalf("value %+v err %v", res, err)
			}
			reqs := m.Requests()
			want := []runlet.ToolChoiceMode{runlet.ToolChoiceRequired, runlet.ToolChoiceAuto}
			if mode == runlet.OutputTool {
				want[1] = runlet.ToolChoiceRequired
			}
			if len(reqs) != 2 || reqs[0].ToolChoice.Mode != want[0] || reqs[1].ToolChoice.Mode != want[1] {
				t.Fatalf("%d requests, choices %v then %v", len(reqs), reqs[0].ToolChoice, reqs[len(reqs)-1].ToolChoice)
			}
		})
	}
}
