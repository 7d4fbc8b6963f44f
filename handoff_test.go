package runlet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

func TestHandoffWithFilter(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			bm := runlettest.NewModel(runlettest.TextReply("Refund issued."))
			billing := &runlet.Agent{Name: "billing", Description: "Refunds and invoices.", Instructions: "You do billing.", Model: bm, Tools: []runlet.Tool{weatherTool()}}
			triage := &runlet.Agent{Name: "triage", Instructions: "Route.", Model: runlettest.NewModel(
				runlettest.ToolCallReply(runlettest.Call("h1", "transfer_to_billing", `{}`)),
			), Handoffs: []runlet.Handoff{{Agent: billing, Filter: func(msgs []runlet.Message) []runlet.Message {
				return msgs[:1] // the user's request only
			}}}}
			store := runlet.NewMemoryStore()
			res, evs, err := runBoth(t, streaming, runlet.NewRuntime(runlet.WithStore(store)), triage, "refund me", runlet.WithSession("s"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != "Refund issued." || res.Agent != "billing" {
				t.Fatalf("%q by %q", res.Output, res.Agent)
			}
			req := bm.Requests()[0]
			if req.Instructions != "You do billing." || len(req.Tools) != 1 || req.Tools[0].Name != "get_weather" {
				t.Fatalf("billing's request: %q, tools %v", req.Instructions, req.Tools)
			}
			if len(req.Messages) != 1 || req.Messages[0].Text() != "refund me" {
				t.Fatalf("billing saw %d messages", len(req.Messages))
			}
			var handoffs int
			for _, ev := range evs {
				if h, ok := ev.(*runlet.HandoffOccurred); ok && h.From == "triage" && h.To == "billing" && h.Agent == "triage" {
					handoffs++
				}
			}
			if handoffs != 1 {
				t.Fatalf("%d handoff events", handoffs)
			}
			hist, _ := store.LoadSession(context.Background(), "s")
			if len(hist) != 4 {
				t.Fatalf("the session holds %d messages, want the whole conversation (4)", len(hist))
			}
			if res.UsageByAgent["triage"].Requests != 1 || res.UsageByAgent["billing"].Requests != 1 {
				t.Fatalf("usage by agent %+v", res.UsageByAgent)
			}
		})
	}
}

func TestHandoffLoopStopsAtMaxTurns(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			ping := &runlet.Agent{Name: "ping"}
			pong := &runlet.Agent{Name: "pong"}
			always := func(to string) *runlettest.Model {
				return &runlettest.Model{Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
					return runlettest.ToolCallReply(runlet.ToolCallPart{Name: "transfer_to_" + to})
				}}
			}
			ping.Model, ping.Handoffs = always("pong"), []runlet.Handoff{{Agent: pong}}
			pong.Model, pong.Handoffs = always("ping"), []runlet.Handoff{{Agent: ping}}
			res, _, err := runBoth(t, streaming, runlet.NewRuntime(), ping, "go", runlet.WithMaxTurns(5))
			var pe *runlet.PolicyError
			if !errors.Is(err, runlet.ErrMaxTurns) || !errors.As(err, &pe) || pe.Policy != "max_turns" {
				t.Fatalf("err = %v", err)
			}
			if res.Turns != 5 || res.Usage.Requests != 5 {
				t.Fatalf("turns %d requests %d", res.Turns, res.Usage.Requests)
			}
		})
	}
}

func TestHandoffResumesWithTheCurrentAgent(t *testing.T) {
	store := runlet.NewMemoryStore()
	var deleted []string
	var mu = &deletedMu{}
	ops := approvalAgent(runlettest.NewModel(script()...), &deleted, &mu.Mutex)
	triage := &runlet.Agent{Name: "triage", Model: runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("h1", "transfer_to_ops", `{}`)),
	), Handoffs: []runlet.Handoff{{Agent: ops}}}
	res, err := runlet.NewRuntime(runlet.WithStore(store)).Run(context.Background(), triage, "clean up")
	if err != nil || res.Status != runlet.StateInterrupted || res.Agent != "ops" {
		t.Fatalf("res %+v err %v", res, err)
	}
	res, err = runlet.NewRuntime(runlet.WithStore(store)).Resume(context.Background(), triage, res.RunID, runlet.Approve("d1"), runlet.Approve("d2"))
	if err != nil || res.Output != "Done." || res.Agent != "ops" || len(deleted) != 2 {
		t.Fatalf("res %+v err %v deleted %v", res, err, deleted)
	}
}

type deletedMu struct{ sync.Mutex }

func TestAgentToolPolicyApproval(t *testing.T) {
	store := runlet.NewMemoryStore()
	researcher := researcherAgent()
	writer := &runlet.Agent{Name: "writer", Model: runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "researcher", `{"input":"Rome"}`)),
		runlettest.TextReply("ok"),
	), Tools: []runlet.Tool{researcher.AsTool(runlet.WithApproval())}}
	res, err := runlet.NewRuntime(runlet.WithStore(store)).Run(context.Background(), writer, "go")
	if err != nil || res.Status != runlet.StateInterrupted || len(res.Pending) != 1 || res.Pending[0].ID != "c1" {
		t.Fatalf("res %+v err %v", res, err)
	}
	if n := len(researcher.Model.(*runlettest.Model).Requests()); n != 0 {
		t.Fatalf("the researcher ran before approval (%d calls)", n)
	}
	res, err = runlet.NewRuntime(runlet.WithStore(store)).Resume(context.Background(), writer, res.RunID, runlet.Approve("c1"))
	if err != nil || res.Output != "ok" || res.UsageByAgent["researcher"].Requests != 2 {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func TestMultiAgentEventsRoundTripJSON(t *testing.T) {
	for _, ev := range []runlet.Event{
		&runlet.AgentStarted{EventHeader: runlet.EventHeader{Type: "agent.started", Depth: 1, CallPath: "c1"}, Resumed: true},
		&runlet.AgentFinished{EventHeader: runlet.EventHeader{Type: "agent.finished"}, Status: runlet.StateFailed, Error: "boom", Policy: "max_turns"},
		&runlet.HandoffOccurred{EventHeader: runlet.EventHeader{Type: "handoff"}, From: "a", To: "b"},
	} {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := runlet.UnmarshalEvent(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		b2, _ := json.Marshal(back)
		if string(b) != string(b2) {
			t.Fatalf("round trip changed %s into %s", b, b2)
		}
	}
}
