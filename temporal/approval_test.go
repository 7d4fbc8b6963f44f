package temporal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// approvalAgent's model calls two tools in one turn, one of them needing
// approval, then answers.
func approvalAgent(c *counter) (*runlet.Agent, *runlettest.Model) {
	model := runlettest.NewModel(
		runlettest.ToolCallReply(
			runlettest.Call("c1", "get_weather", `{"city":"Paris"}`),
			runlettest.Call("c2", "send_mail", `{"city":"Draft"}`),
		),
		runlettest.TextReply("done"),
	)
	mail := runlet.NewTool("send_mail", "Sends mail.", func(_ context.Context, in cityArgs) (string, error) {
		c.add("mail:" + in.City)
		return "sent " + in.City, nil
	}, runlet.WithApproval())
	return &runlet.Agent{Name: "a", Model: model, Tools: []runlet.Tool{weatherTool(c), mail}}, model
}

func TestApprovalWaitsForUpdate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		decision runlet.Decision
		result   string
		isErr    bool
		mail     string
	}{
		{"approve", runlet.Approve("c2"), "sent Draft", false, "mail:Draft"},
		{"edit", runlet.ApproveWithArguments("c2", json.RawMessage(`{"city":"Final"}`)), "sent Final", false, "mail:Final"},
		{"reject", runlet.Reject("c2", "not now"), "Error: call rejected: not now", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c counter
			agent, _ := approvalAgent(&c)
			rec := &recorder{}
			d := mustNew(t, Config{Agents: []*runlet.Agent{agent}, Observers: []runlet.Observer{rec}})
			e := env(t, d)
			var rejected, completed bool
			e.RegisterDelayedCallback(func() {
				// Three days later: the query lists the pending call, the
				// tool that needs no approval has already run.
				v, err := e.QueryWorkflow(PendingQuery)
				var pending []runlet.ToolCallPart
				if err != nil || v.Get(&pending) != nil || len(pending) != 1 || pending[0].ID != "c2" {
					t.Errorf("pending = %+v, %v", pending, err)
				}
				v, _ = e.QueryWorkflow(ProgressQuery)
				var p Progress
				if v.Get(&p); p.State != runlet.StateInterrupted || p.Turn != 1 || len(p.Pending) != 1 {
					t.Errorf("progress = %+v", p)
				}
				if c.get("Paris") != 1 {
					t.Errorf("the tool without approval did not run before the wait")
				}
				// A decision for another call is rejected and changes nothing.
				e.UpdateWorkflow(DecideUpdate, "bad", &testsuite.TestUpdateCallback{
					OnReject: func(error) { rejected = true },
				}, []runlet.Decision{runlet.Approve("c1")})
				e.UpdateWorkflow(DecideUpdate, "good", &testsuite.TestUpdateCallback{
					OnReject:   func(err error) { t.Errorf("update rejected: %v", err) },
					OnComplete: func(_ any, err error) { completed = err == nil },
				}, []runlet.Decision{tc.decision})
			}, 72*time.Hour)
			e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go"})
			var res runlet.Result
			if err := e.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if !rejected || !completed {
				t.Fatalf("bad update rejected %v, good one completed %v", rejected, completed)
			}
			got := toolResults(res.Messages[2])
			if got[0].Content != "sunny in Paris" || got[1].Content != tc.result || got[1].IsError != tc.isErr {
				t.Fatalf("results %+v", got)
			}
			if tc.mail != "" && c.get(tc.mail) != 1 || c.get("Paris") != 1 {
				t.Fatalf("executions %v", c.n)
			}
			// The assistant's message holds the call that ran; an edit keeps
			// the model's arguments beside it.
			wantArgs, wantOrig := `{"city":"Draft"}`, ""
			if tc.name == "edit" {
				wantArgs, wantOrig = `{"city":"Final"}`, `{"city":"Draft"}`
			}
			if c := res.Messages[1].ToolCalls()[1]; string(c.Arguments) != wantArgs || string(c.OriginalArguments) != wantOrig {
				t.Errorf("recorded call arguments %s, original %s; want %s, %q", c.Arguments, c.OriginalArguments, wantArgs, wantOrig)
			}
			var interrupted, resumed bool
			for _, ev := range rec.all() {
				switch ev.(type) {
				case *runlet.RunInterrupted:
					interrupted = true
				case *runlet.RunResumed:
					resumed = interrupted
				}
			}
			if !resumed {
				t.Errorf("want run.interrupted then run.resumed events")
			}
		})
	}
}

func TestApprovalFromHook(t *testing.T) {
	var c counter
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Oslo"}`)), runlettest.TextReply("ok"))
	hooks := runlet.Hooks{BeforeToolCall: func(context.Context, *runlet.ToolCallPart) (*runlet.ToolResultPart, error) {
		return nil, runlet.ErrApprovalRequired
	}}
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{weatherTool(&c)}}}, Hooks: []runlet.Hooks{hooks}})
	e := env(t, d)
	e.RegisterDelayedCallback(func() {
		if c.get("Oslo") != 0 {
			t.Errorf("the call ran before approval")
		}
		e.UpdateWorkflow(DecideUpdate, "u", &testsuite.TestUpdateCallback{}, []runlet.Decision{runlet.Approve("c1")})
	}, time.Hour)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go"})
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil || c.get("Oslo") != 1 {
		t.Fatalf("%v, executions %v", err, c.n)
	}
}

func TestApprovalTimeout(t *testing.T) {
	var c counter
	agent, _ := approvalAgent(&c)
	d := mustNew(t, Config{Agents: []*runlet.Agent{agent}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go", ApprovalTimeout: 24 * time.Hour})
	_, fd := failure(t, e.GetWorkflowError())
	if fd.Policy != "approval_timeout" || c.get("mail:Draft") != 0 {
		t.Fatalf("policy %q, executions %v", fd.Policy, c.n)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	var c counter
	agent, _ := approvalAgent(&c)
	rec := &recorder{}
	d := mustNew(t, Config{Agents: []*runlet.Agent{agent}, Observers: []runlet.Observer{rec}})
	e := env(t, d)
	e.RegisterDelayedCallback(e.CancelWorkflow, time.Hour)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go"})
	if err := e.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("error %v, want canceled", err)
	}
	evs := rec.all()
	if f, ok := evs[len(evs)-1].(*runlet.RunFailed); !ok || f.ErrorType != "canceled" {
		t.Fatalf("last event %T %+v", evs[len(evs)-1], evs[len(evs)-1])
	}
	if c.get("mail:Draft") != 0 {
		t.Fatal("a cancelled call ran")
	}
}

func TestCancelDuringToolCall(t *testing.T) {
	started, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	slow := runlet.NewTool("slow", "Waits.", func(ctx context.Context, _ struct{}) (string, error) {
		defer close(returned)
		close(started)
		select { // the test environment need not cancel a running activity
		case <-ctx.Done():
		case <-release:
		}
		return "", ctx.Err()
	})
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "slow", `{}`)))
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{slow}}}})
	e := env(t, d)
	e.SetTestTimeout(30 * time.Second)
	go func() {
		<-started
		e.CancelWorkflow()
	}()
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go"})
	close(release)
	<-returned
	if err := e.GetWorkflowError(); err == nil || !strings.Contains(strings.ToLower(err.Error()), "cancel") {
		t.Fatalf("error %v, want canceled", err)
	}
}
