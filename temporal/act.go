package temporal

import (
	"fmt"
	"time"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/workflow"
)

// act runs one turn's tool calls as parallel activities and returns their
// results in the model's order. Calls that need a decision make the run
// wait, durably and for as long as it takes, for the decide update; then
// the approved ones run and the rejected ones get an is-error result.
func (r *wfRun) act(calls []runlet.ToolCallPart) ([]runlet.ToolResultPart, error) {
	r.transition(runlet.StateActing)
	results := make([]runlet.ToolResultPart, len(calls))
	all := make([]int, len(calls))
	for i := range calls {
		all[i] = i
	}
	pending, err := r.runTools(calls, results, all, false)
	if err != nil || len(pending) == 0 {
		return results, err
	}
	for _, i := range pending {
		r.pending = append(r.pending, calls[i])
	}
	res := r.snapshot(runlet.StateInterrupted)
	res.Pending = r.pending
	r.transition(runlet.StateInterrupted)
	r.emit(&runlet.RunInterrupted{Pending: r.pending, Result: res})
	if err := r.waitForDecisions(); err != nil {
		return nil, err
	}
	byID := make(map[string]runlet.Decision, len(r.decisions))
	for _, d := range r.decisions {
		byID[d.CallID] = d
	}
	r.emit(&runlet.RunResumed{SessionID: r.in.SessionID, Decisions: r.decisions})
	r.pending, r.decisions = nil, nil
	r.transition(runlet.StateActing)
	var approved []int
	for _, i := range pending {
		c := calls[i]
		d := byID[c.ID]
		if !d.Approve {
			reason := d.Reason
			if reason == "" {
				reason = "rejected by a human"
			}
			results[i] = runlet.ToolResultPart{CallID: c.ID, Name: c.Name, Content: "Error: call rejected: " + reason, IsError: true}
			r.emit(&runlet.ToolStarted{Call: c})
			r.emit(&runlet.ToolFinished{Call: c, Result: results[i], ErrorKind: runlet.ToolDenied})
			continue
		}
		if len(d.Arguments) > 0 {
			calls[i].Arguments = d.Arguments
		}
		approved = append(approved, i)
	}
	again, err := r.runTools(calls, results, approved, true)
	if err == nil && len(again) > 0 {
		err = fmt.Errorf("runlet/temporal: call %q still waits for approval after it was approved", calls[again[0]].ID)
	}
	return results, err
}

// runTools runs the calls at idx as parallel activities and fills results
// in the model's order. It returns the indexes of the calls that wait for
// a decision. approved says a human approved the calls.
func (r *wfRun) runTools(calls []runlet.ToolCallPart, results []runlet.ToolResultPart, idx []int, approved bool) ([]int, error) {
	actx := workflow.WithActivityOptions(r.ctx, r.d.cfg.ToolActivity.workflowOptions(30*time.Second))
	futures := make([]workflow.Future, len(idx))
	for k, i := range idx {
		futures[k] = workflow.ExecuteActivity(actx, ToolActivityName, ToolInput{
			Agent: r.in.Agent, RunID: r.runID, SessionID: r.in.SessionID, Turn: r.turn, Call: calls[i], Approved: approved,
		})
	}
	var pending []int
	var firstErr error
	for k, i := range idx {
		var out ToolOutput
		if err := futures[k].Get(r.ctx, &out); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if out.Pending {
			pending = append(pending, i)
			continue
		}
		results[i] = out.Result
	}
	return pending, firstErr
}

// waitForDecisions blocks the workflow until the decide update delivered
// decisions, or until RunInput.ApprovalTimeout.
func (r *wfRun) waitForDecisions() error {
	ready := func() bool { return r.decisions != nil }
	if r.in.ApprovalTimeout <= 0 {
		return workflow.Await(r.ctx, ready)
	}
	ok, err := workflow.AwaitWithTimeout(r.ctx, r.in.ApprovalTimeout, ready)
	if err != nil {
		return err
	}
	if !ok {
		return &runlet.PolicyError{Policy: "approval_timeout", Err: fmt.Errorf("runlet/temporal: no decision within %s", r.in.ApprovalTimeout)}
	}
	return nil
}
