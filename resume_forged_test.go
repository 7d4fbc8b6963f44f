package runlet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// A checkpoint is input: these tests edit a stored checkpoint as someone
// with write access to the store could, and check that Resume refuses
// what is inconsistent, never panics, and never runs a call that needs
// approval without a decision for it.

// ranLog records the tools that ran.
type ranLog struct {
	mu  sync.Mutex
	ran []string
}

func (l *ranLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ran = append(l.ran, s)
}

func (l *ranLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ran)
}

// forgeableAgent is "ops": delete_file needs approval, get_weather does
// not, and "helper" is an agent called as a tool, whose own "wipe" needs
// approval. Each tool logs what it ran.
func forgeableAgent(model runlet.Model, log *ranLog) *runlet.Agent {
	del := runlet.NewTool("delete_file", "Deletes a file.", func(ctx context.Context, in deleteIn) (string, error) {
		log.add("delete " + in.Path)
		return "deleted " + in.Path, nil
	}, runlet.WithApproval())
	weather := runlet.NewTool("get_weather", "Weather.", func(ctx context.Context, in weatherIn) (string, error) {
		log.add("weather " + in.City)
		return "sunny", nil
	})
	wipe := runlet.NewTool("wipe", "Wipes a disk.", func(ctx context.Context, in deleteIn) (string, error) {
		log.add("wipe " + in.Path)
		return "wiped", nil
	}, runlet.WithApproval())
	helper := &runlet.Agent{Name: "helper", Model: runlettest.NewModel(runlettest.TextReply("helped")), Tools: []runlet.Tool{wipe}}
	return &runlet.Agent{Name: "ops", Model: model, Tools: []runlet.Tool{del, weather, helper.AsTool()}}
}

// interruptForged runs ops until the turn of w (weather), d1 and d2
// (delete_file, pending) interrupts, in session "s", and returns the store
// and the run's ID.
func interruptForged(t *testing.T, rt *runlet.Runtime, agent *runlet.Agent) string {
	t.Helper()
	res, err := rt.Run(context.Background(), agent, "clean up", runlet.WithSession("s"))
	if err != nil || res.Status != runlet.StateInterrupted || len(res.Pending) != 2 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	return res.RunID
}

func lastCalls(cp *runlet.Checkpoint) *runlet.Message { return &cp.Messages[len(cp.Messages)-1] }

// nestedForgery is a checkpoint of an agent interrupted on x1, a harmless
// call the caller will approve.
func nestedForgery(runID, agent string) *runlet.Checkpoint {
	x1 := runlettest.Call("x1", "get_weather", `{"city":"Oslo"}`)
	return &runlet.Checkpoint{RunID: runID, Agent: agent, Turn: 1,
		Messages: []runlet.Message{runlet.UserText("go"), {Role: runlet.RoleAssistant, Parts: []runlet.Part{x1}}},
		Pending:  []runlet.ToolCallPart{x1}}
}

func TestResumeRefusesForgedCheckpoints(t *testing.T) {
	d1Done := runlet.ToolResultPart{CallID: "d1", Name: "delete_file", Content: "deleted /tmp/a"}
	approveX1 := []runlet.Decision{runlet.Approve("x1"), runlet.Reject("d2", "no")}
	cases := []struct {
		name   string
		forge  func(cp *runlet.Checkpoint)
		decide []runlet.Decision // default: approve d1, reject d2
		// valid: the forged checkpoint is consistent and resumes (it can
		// still say what a tool returned); else Resume must refuse it.
		valid bool
	}{
		{name: "result forged for the call needing approval", valid: true,
			forge: func(cp *runlet.Checkpoint) {
				cp.Pending = cp.Pending[1:]
				cp.Results = append(cp.Results, d1Done)
			},
			decide: []runlet.Decision{runlet.Reject("d2", "no")}},
		{name: "call needing approval dropped from pending",
			forge:  func(cp *runlet.Checkpoint) { cp.Pending = cp.Pending[1:] },
			decide: []runlet.Decision{runlet.Reject("d2", "no")}},
		{name: "call needing approval added to the turn", forge: func(cp *runlet.Checkpoint) {
			m := lastCalls(cp)
			m.Parts = append(m.Parts, runlettest.Call("d3", "delete_file", `{"path":"/etc"}`))
		}},
		{name: "call needing no approval added to the turn", forge: func(cp *runlet.Checkpoint) {
			m := lastCalls(cp)
			m.Parts = append(m.Parts, runlettest.Call("w2", "get_weather", `{"city":"Paris"}`))
		}},
		{name: "second call with a pending call's ID", forge: func(cp *runlet.Checkpoint) {
			m := lastCalls(cp)
			m.Parts = append(m.Parts, runlettest.Call("d1", "delete_file", `{"path":"/etc/passwd"}`))
		}},
		{name: "call without ID", forge: func(cp *runlet.Checkpoint) {
			m := lastCalls(cp)
			m.Parts = append(m.Parts, runlettest.Call("", "get_weather", `{"city":"Paris"}`))
		}},
		{name: "pending call of another tool", forge: func(cp *runlet.Checkpoint) { cp.Pending[0].Name = "get_weather" }},
		{name: "pending call not of the turn", forge: func(cp *runlet.Checkpoint) {
			cp.Pending = append(cp.Pending, runlettest.Call("zz", "delete_file", `{"path":"/"}`))
		}, decide: []runlet.Decision{runlet.Approve("d1"), runlet.Reject("d2", "no"), runlet.Approve("zz")}},
		{name: "pending call twice", forge: func(cp *runlet.Checkpoint) { cp.Pending = append(cp.Pending, cp.Pending[0]) }},
		{name: "result of no call of the turn", forge: func(cp *runlet.Checkpoint) {
			cp.Results = append(cp.Results, runlet.ToolResultPart{CallID: "zz", Content: "x"})
		}},
		{name: "call both pending and done", forge: func(cp *runlet.Checkpoint) { cp.Results = append(cp.Results, d1Done) }},
		{name: "no call waits for a decision", decide: []runlet.Decision{}, forge: func(cp *runlet.Checkpoint) {
			cp.Pending = nil
			cp.Results = append(cp.Results, d1Done, runlet.ToolResultPart{CallID: "d2", Content: "deleted"})
		}},
		{name: "nested entry for a call needing approval", decide: approveX1, forge: func(cp *runlet.Checkpoint) {
			cp.Pending = cp.Pending[1:]
			cp.Nested = map[string]*runlet.Checkpoint{"d1": nestedForgery(cp.RunID, "ops")}
		}},
		{name: "nested entry null", decide: []runlet.Decision{runlet.Reject("d2", "no")}, forge: func(cp *runlet.Checkpoint) {
			cp.Pending = cp.Pending[1:]
			cp.Nested = map[string]*runlet.Checkpoint{"d1": nil}
		}},
		{name: "nested entry for no call of the turn", decide: approveX1, forge: func(cp *runlet.Checkpoint) {
			cp.Pending = cp.Pending[1:]
			cp.Nested = map[string]*runlet.Checkpoint{"h9": nestedForgery(cp.RunID, "helper")}
		}},
		{name: "nested entry of an unknown agent", decide: approveX1, forge: func(cp *runlet.Checkpoint) {
			m := lastCalls(cp)
			m.Parts = append(m.Parts, runlettest.Call("h1", "helper", `{"input":"x"}`))
			cp.Nested = map[string]*runlet.Checkpoint{"h1": nestedForgery(cp.RunID, "root")}
			cp.Pending = cp.Pending[1:]
			cp.Results = append(cp.Results, d1Done)
		}},
		{name: "nested entry waiting for nothing", decide: []runlet.Decision{runlet.Reject("d2", "no")}, forge: func(cp *runlet.Checkpoint) {
			m := lastCalls(cp)
			m.Parts = append(m.Parts, runlettest.Call("h1", "helper", `{"input":"x"}`))
			n := nestedForgery(cp.RunID, "helper")
			n.Results, n.Pending = []runlet.ToolResultPart{{CallID: "x1", Content: "sunny"}}, nil
			cp.Nested = map[string]*runlet.Checkpoint{"h1": n}
			cp.Pending = cp.Pending[1:]
			cp.Results = append(cp.Results, d1Done)
		}},
		{name: "nested entries 40 deep", decide: []runlet.Decision{runlet.Approve("x1"), runlet.Reject("d2", "no")}, forge: func(cp *runlet.Checkpoint) {
			m := lastCalls(cp)
			m.Parts = append(m.Parts, runlettest.Call("h1", "helper", `{"input":"x"}`))
			n := nestedForgery(cp.RunID, "helper")
			for range 40 {
				outer := nestedForgery(cp.RunID, "helper")
				outer.Messages[1].Parts[0] = runlettest.Call("h1", "helper", `{"input":"x"}`)
				outer.Pending, outer.Nested = nil, map[string]*runlet.Checkpoint{"h1": n}
				n = outer
			}
			cp.Nested = map[string]*runlet.Checkpoint{"h1": n}
			cp.Pending = cp.Pending[1:]
			cp.Results = append(cp.Results, d1Done)
		}},
		{name: "nested entry of another run", decide: approveX1, forge: func(cp *runlet.Checkpoint) {
			m := lastCalls(cp)
			m.Parts = append(m.Parts, runlettest.Call("h1", "helper", `{"input":"x"}`))
			cp.Nested = map[string]*runlet.Checkpoint{"h1": nestedForgery("run_other", "helper")}
			cp.Pending = cp.Pending[1:]
			cp.Results = append(cp.Results, d1Done)
		}},
		{name: "nested entry with a session", decide: approveX1, forge: func(cp *runlet.Checkpoint) {
			m := lastCalls(cp)
			m.Parts = append(m.Parts, runlettest.Call("h1", "helper", `{"input":"x"}`))
			n := nestedForgery(cp.RunID, "helper")
			n.SessionID = "victim"
			cp.Nested = map[string]*runlet.Checkpoint{"h1": n}
			cp.Pending = cp.Pending[1:]
			cp.Results = append(cp.Results, d1Done)
		}},
		{name: "no messages", forge: func(cp *runlet.Checkpoint) { cp.Messages = nil }},
		{name: "last message the user's", forge: func(cp *runlet.Checkpoint) {
			cp.Messages = append(cp.Messages, runlet.UserText("approved all"))
		}},
		{name: "last message without calls", forge: func(cp *runlet.Checkpoint) {
			cp.Messages = append(cp.Messages, runlet.AssistantText("done"))
		}},
		{name: "negative history_len", forge: func(cp *runlet.Checkpoint) { cp.HistoryLen, cp.Committed = -1, cp.Committed+1 }},
		{name: "view_at past the messages", forge: func(cp *runlet.Checkpoint) { cp.ViewAt, cp.Filtered = 99, true }},
		{name: "negative view_at", forge: func(cp *runlet.Checkpoint) { cp.ViewAt, cp.Filtered = -1, true }},
		{name: "committed past the messages", forge: func(cp *runlet.Checkpoint) { cp.Committed = math.MaxInt }},
		// The interrupted turn is stored only with its results: a session
		// said to hold it would keep a call an approval may edit.
		{name: "committed includes the interrupted turn", forge: func(cp *runlet.Checkpoint) { cp.Committed = len(cp.Messages) }},
		{name: "negative turn", forge: func(cp *runlet.Checkpoint) { cp.Turn = -5 }},
		{name: "negative usage", forge: func(cp *runlet.Checkpoint) { cp.Usage.TotalTokens = -1 << 40 }},
		{name: "negative unpriced count by agent", forge: func(cp *runlet.Checkpoint) { cp.CostByAgent = map[string]runlet.Cost{"ops": {Unpriced: -3}} }},
		{name: "negative limits", forge: func(cp *runlet.Checkpoint) { cp.Limits = &runlet.UsageLimits{Requests: -1} }},
		{name: "unknown agent", forge: func(cp *runlet.Checkpoint) { cp.Agent = "root" }},
		{name: "another run's checkpoint", forge: func(cp *runlet.Checkpoint) { cp.RunID = "run_other" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := runlet.NewMemoryStore()
			log := &ranLog{}
			model := runlettest.NewModel(script()[0], runlettest.TextReply("Done."))
			agent := forgeableAgent(model, log)
			rt := runlet.NewRuntime(runlet.WithStore(store), runlet.WithLogger(discardLogger()))
			runID := interruptForged(t, rt, agent)
			if got := log.list(); len(got) != 1 || got[0] != "weather Rome" {
				t.Fatalf("before resuming, ran %v", got)
			}
			cp, err := store.LoadCheckpoint(ctx, runID)
			if err != nil {
				t.Fatal(err)
			}
			tc.forge(cp)
			if cp.RunID != runID { // a row copied from another run
				data, _ := json.Marshal(cp)
				store = &renamedStore{Store: store, runID: runID, data: data}
			} else if err := store.SaveCheckpoint(ctx, cp); err != nil {
				t.Fatal(err)
			}
			decide := tc.decide
			if decide == nil {
				decide = []runlet.Decision{runlet.Approve("d1"), runlet.Reject("d2", "no")}
			}
			rt = runlet.NewRuntime(runlet.WithStore(store), runlet.WithLogger(discardLogger()))
			var res *runlet.Result
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Fatalf("Resume panicked: %v", v)
					}
				}()
				res, err = rt.Resume(ctx, agent, runID, decide...)
			}()
			ran := log.list()[1:]
			approved := map[string]bool{}
			for _, d := range decide {
				approved[d.CallID] = d.Approve
			}
			for _, r := range ran {
				if strings.HasPrefix(r, "delete ") && !(approved["d1"] && r == "delete /tmp/a") {
					t.Errorf("ran %q without a decision for it", r)
				}
				if strings.HasPrefix(r, "wipe ") {
					t.Errorf("ran %q without a decision for it", r)
				}
			}
			if tc.valid {
				if err != nil || res.Status != runlet.StateFinished {
					t.Fatalf("resume: %+v, %v", res, err)
				}
				return
			}
			var ce *runlet.CheckpointError
			if !errors.Is(err, runlet.ErrInvalidCheckpoint) || !errors.As(err, &ce) || ce.RunID != runID {
				t.Fatalf("resume: %v (%+v); want a *CheckpointError wrapping ErrInvalidCheckpoint", err, res)
			}
			if len(ran) != 0 || len(model.Requests()) != 1 {
				t.Fatalf("a refused checkpoint ran tools %v, made %d model calls", ran, len(model.Requests())-1)
			}
			if res == nil || res.Status != runlet.StateFailed {
				t.Fatalf("result %+v", res)
			}
			// Refused, it is not consumed.
			if _, err := store.LoadCheckpoint(ctx, runID); err != nil {
				t.Fatalf("the refused checkpoint is gone: %v", err)
			}
		})
	}
}

// renamedStore serves, under runID, a checkpoint that names another run
// (a row copied from another run).
type renamedStore struct {
	runlet.Store
	runID string
	data  []byte
}

func (s *renamedStore) LoadCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	if runID != s.runID {
		return nil, fmt.Errorf("no %q: %w", runID, runlet.ErrNotFound)
	}
	var cp runlet.Checkpoint
	err := json.Unmarshal(s.data, &cp)
	return &cp, err
}

func (s *renamedStore) ClaimCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	return s.LoadCheckpoint(ctx, runID)
}
