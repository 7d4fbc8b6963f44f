package temporal

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.temporal.io/sdk/testsuite"
)

// The decide update is the only way a call that needs approval runs: each
// update that does not decide exactly the pending calls, once each, is
// refused and changes nothing. (Edited arguments that are not JSON are
// refused too, checkDecisions; the JSON data converter cannot even send
// them.)
func TestDecideUpdateRefusesWrongDecisions(t *testing.T) {
	var c counter
	agent, _ := approvalAgent(&c)
	d := mustNew(t, Config{Agents: []*runlet.Agent{agent}})
	e := env(t, d)
	bad := []struct {
		name string
		ds   []runlet.Decision
	}{
		{"none", []runlet.Decision{}},
		{"null", nil},
		{"not a pending call", []runlet.Decision{runlet.Approve("c1")}},
		{"unknown call", []runlet.Decision{runlet.Approve("zz")}},
		{"an extra call", []runlet.Decision{runlet.Approve("c2"), runlet.Approve("c1")}},
		{"twice", []runlet.Decision{runlet.Approve("c2"), runlet.Approve("c2")}},
		{"twice, differently", []runlet.Decision{runlet.Reject("c2", "no"), runlet.Approve("c2")}},
		{"empty call ID", []runlet.Decision{{Approve: true}}},
	}
	refused := map[string]bool{}
	var completed, lateRefused bool
	e.RegisterDelayedCallback(func() {
		for _, b := range bad {
			e.UpdateWorkflow(DecideUpdate, b.name, &testsuite.TestUpdateCallback{
				OnReject:   func(error) { refused[b.name] = true },
				OnComplete: func(any, error) {},
			}, b.ds)
		}
		if c.get("mail:Draft")+c.get("mail:") != 0 {
			t.Errorf("a refused decision ran the call: %v", c.n)
		}
		e.UpdateWorkflow(DecideUpdate, "good", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("update rejected: %v", err) },
			OnComplete: func(_ any, err error) { completed = err == nil },
		}, []runlet.Decision{runlet.ApproveWithArguments("c2", json.RawMessage(`{"city":"Final"}`))})
		// Decided: a second decision is refused.
		e.UpdateWorkflow(DecideUpdate, "late", &testsuite.TestUpdateCallback{
			OnReject:   func(error) { lateRefused = true },
			OnComplete: func(any, error) {},
		}, []runlet.Decision{runlet.Approve("c2")})
	}, time.Hour)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go"})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		if !refused[b.name] {
			t.Errorf("decisions %q were accepted", b.name)
		}
	}
	if !completed || !lateRefused {
		t.Fatalf("good update completed %v, late one refused %v", completed, lateRefused)
	}
	if c.get("mail:Final") != 1 || c.get("mail:Draft") != 0 {
		t.Fatalf("executions %v", c.n)
	}
}

// Two calls a model gave the same ID wait for a decision each.
func TestDuplicateCallIDsWaitForADecisionEach(t *testing.T) {
	var c counter
	agent, model := approvalAgent(&c)
	*model = *runlettest.NewModel(
		runlettest.ToolCallReply(
			runlettest.Call("c2", "send_mail", `{"city":"Draft"}`),
			runlettest.Call("c2", "send_mail", `{"city":"Everyone"}`),
		),
		runlettest.TextReply("done"),
	)
	d := mustNew(t, Config{Agents: []*runlet.Agent{agent}})
	e := env(t, d)
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(PendingQuery)
		var pending []runlet.ToolCallPart
		if err != nil || v.Get(&pending) != nil || len(pending) != 2 || pending[0].ID != "c2" || pending[1].ID == "c2" {
			t.Errorf("pending = %+v, %v", pending, err)
			return
		}
		// One decision for "c2" no longer decides both.
		e.UpdateWorkflow(DecideUpdate, "one", &testsuite.TestUpdateCallback{
			OnReject:   func(error) {},
			OnComplete: func(any, error) { t.Error("one decision for two calls accepted") },
		}, []runlet.Decision{runlet.Approve("c2")})
		e.UpdateWorkflow(DecideUpdate, "both", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("update rejected: %v", err) },
			OnComplete: func(any, error) {},
		}, []runlet.Decision{runlet.Approve("c2"), runlet.Reject(pending[1].ID, "not everyone")})
	}, time.Hour)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go"})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if c.get("mail:Draft") != 1 || c.get("mail:Everyone") != 0 {
		t.Fatalf("executions %v", c.n)
	}
}

func TestNameCallsUniqueInTheRun(t *testing.T) {
	resp := &runlet.ModelResponse{Message: runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlettest.Call("a", "f", `{}`),
		runlettest.Call("a", "f", `{}`),
		runlettest.Call("", "f", `{}`),
		runlettest.Call("call_t3_2", "f", `{}`),
	}}}
	nameCalls(resp, 3)
	var ids []string
	for _, c := range resp.Message.ToolCalls() {
		ids = append(ids, c.ID)
	}
	if got := strings.Join(ids, ","); got != "a,call_t3_1,call_t3_2,call_t3_3" {
		t.Fatalf("IDs %s", got)
	}
}
