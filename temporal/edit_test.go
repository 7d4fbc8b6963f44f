package temporal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/testsuite"
)

// A durable approval with edited arguments: the tool activity runs them,
// and the workflow's Result, the session, the next model request and the
// tool events show them, with the model's in OriginalArguments.
func TestEditedApprovalIsTheHistory(t *testing.T) {
	var c counter
	agent, model := approvalAgent(&c)
	rec := &recorder{}
	store := runlet.NewMemoryStore()
	d := mustNew(t, Config{Agents: []*runlet.Agent{agent}, Observers: []runlet.Observer{rec}, Sessions: store})
	e := env(t, d)
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(DecideUpdate, "u", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("update rejected: %v", err) },
		}, []runlet.Decision{runlet.ApproveWithArguments("c2", json.RawMessage(`{"city":"Final"}`))})
	}, time.Hour)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go", SessionID: "s"})
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if c.get("mail:Final") != 1 || c.get("mail:Draft") != 0 {
		t.Fatalf("executions %v", c.n)
	}
	want := func(where string, call runlet.ToolCallPart) {
		t.Helper()
		if string(call.Arguments) != `{"city":"Final"}` || string(call.OriginalArguments) != `{"city":"Draft"}` {
			t.Errorf("%s: call %s has arguments %s, original %s", where, call.ID, call.Arguments, call.OriginalArguments)
		}
	}
	want("Result.Messages", res.Messages[1].ToolCalls()[1])
	hist, err := store.LoadSession(context.Background(), "s")
	if err != nil || len(hist) != 4 {
		t.Fatalf("session %d messages, %v", len(hist), err)
	}
	want("session", hist[1].ToolCalls()[1])
	reqs := model.Requests()
	want("next request", reqs[len(reqs)-1].Messages[1].ToolCalls()[1])
	if other := hist[1].ToolCalls()[0]; other.OriginalArguments != nil {
		t.Errorf("the call approved as it was is marked edited: %+v", other)
	}
	var started bool
	for _, ev := range rec.all() {
		if s, ok := ev.(*runlet.ToolStarted); ok && s.Call.ID == "c2" {
			started = true
			want("ToolStarted", s.Call)
		}
	}
	if !started {
		t.Error("no ToolStarted for c2")
	}
}

// Edited arguments that are not a JSON object or that the tool's schema
// rejects: the decide update is refused, the run keeps waiting and a
// corrected decision goes through. (Arguments that are not JSON at all do
// not get that far: the client cannot encode the update.)
func TestEditedApprovalRefused(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"not an object", `["Final"]`, "not a JSON object"},
		{"schema", `{"city":42}`, `input schema of tool "send_mail" rejects`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c counter
			agent, _ := approvalAgent(&c)
			e := env(t, mustNew(t, Config{Agents: []*runlet.Agent{agent}}))
			var rejectErr error
			e.RegisterDelayedCallback(func() {
				e.UpdateWorkflow(DecideUpdate, "bad", &testsuite.TestUpdateCallback{
					OnReject:   func(err error) { rejectErr = err },
					OnComplete: func(any, error) { t.Errorf("bad edit accepted") },
				}, []runlet.Decision{runlet.ApproveWithArguments("c2", json.RawMessage(tc.args))})
			}, time.Hour)
			e.RegisterDelayedCallback(func() {
				e.UpdateWorkflow(DecideUpdate, "good", &testsuite.TestUpdateCallback{
					OnReject: func(err error) { t.Errorf("update rejected: %v", err) },
				}, []runlet.Decision{runlet.ApproveWithArguments("c2", json.RawMessage(`{"city":"Final"}`))})
			}, 2*time.Hour)
			e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go"})
			if err := e.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if rejectErr == nil || !strings.Contains(rejectErr.Error(), tc.want) {
				t.Errorf("bad edit refused with %v, want %q", rejectErr, tc.want)
			}
			if c.get("mail:Final") != 1 || len(c.n) != 2 {
				t.Errorf("executions %v", c.n)
			}
		})
	}
}
