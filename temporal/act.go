package temporal

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
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
	r.turnRefs = nil
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
	var edited map[string]runlet.ToolCallPart
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
		if e := d.Edit(c); e.OriginalArguments != nil && c.OriginalArguments == nil {
			if edited == nil {
				edited = make(map[string]runlet.ToolCallPart)
			}
			edited[c.ID] = e
		} else if len(d.Arguments) > 0 {
			calls[i].Arguments = d.Arguments
		}
		approved = append(approved, i)
	}
	if edited != nil {
		r.applyEdits(calls, edited)
	}
	again, err := r.runTools(calls, results, approved, true)
	if err == nil && len(again) > 0 {
		err = fmt.Errorf("runlet/temporal: call %q still waits for approval after it was approved", calls[again[0]].ID)
	}
	return results, err
}

// applyEdits makes approvals with edited arguments part of the calls: in
// calls (what the tool activities run and their events show) and in the
// assistant message that made them, the last the run added, so the
// Result, the session and the next model request show what ran, with the
// model's arguments in OriginalArguments (see runlet.ApproveWithArguments).
// Histories recorded before this change ran the edited arguments and kept
// the model's in the message; the version marker replays them so.
func (r *wfRun) applyEdits(calls []runlet.ToolCallPart, edited map[string]runlet.ToolCallPart) {
	if workflow.GetVersion(r.ctx, editedCallChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		for i, c := range calls {
			if e, ok := edited[c.ID]; ok {
				calls[i].Arguments = e.Arguments
			}
		}
		return
	}
	for i, c := range calls {
		if e, ok := edited[c.ID]; ok {
			calls[i] = e
		}
	}
	n := len(r.added) - 1
	last := r.added[n]
	last.Parts = slices.Clone(last.Parts)
	for j, p := range last.Parts {
		if c, ok := p.(runlet.ToolCallPart); ok {
			if e, ok := edited[c.ID]; ok {
				last.Parts[j] = e
			}
		}
	}
	r.added = slices.Clone(r.added)
	r.added[n] = last
}

// editedCallChange names the change that records an edited approval in the
// call itself (workflow.GetVersion).
const editedCallChange = "runlet.edited-call"

// runTools runs the calls at idx as parallel activities and fills results
// in the model's order. It returns the indexes of the calls that wait for
// a decision. approved says a human approved the calls.
//
// At most RunInput.ToolConcurrency activities are outstanding at once; the
// next call is scheduled as one finishes. A model asking for thousands of
// calls so never has them all pending at once (past the server's limit on
// pending activities, every workflow task would fail). After a failure or
// a cancellation no further call is scheduled.
func (r *wfRun) runTools(calls []runlet.ToolCallPart, results []runlet.ToolResultPart, idx []int, approved bool) ([]int, error) {
	actx := workflow.WithActivityOptions(r.ctx, r.d.cfg.ToolActivity.workflowOptions(30*time.Second))
	outs := make([]ToolOutput, len(idx))
	errs := make([]error, len(idx))
	sel := workflow.NewSelector(r.ctx)
	scheduled, failed := 0, false
	schedule := func() {
		k := scheduled
		scheduled++
		f := workflow.ExecuteActivity(actx, ToolActivityName, ToolInput{
			Agent: r.in.Agent, RunID: r.runID, SessionID: r.in.SessionID, Turn: r.turn, Call: calls[idx[k]], Approved: approved,
		})
		sel.AddFuture(f, func(f workflow.Future) {
			if errs[k] = f.Get(r.ctx, &outs[k]); errs[k] != nil {
				failed = true
			}
		})
	}
	for scheduled < min(r.toolWindow(len(idx)), len(idx)) {
		schedule()
	}
	for done := 0; done < scheduled; done++ {
		sel.Select(r.ctx)
		if scheduled < len(idx) && !failed && r.ctx.Err() == nil {
			schedule()
		}
	}
	var pending []int
	for k, i := range idx {
		switch {
		case k >= scheduled:
			return nil, cmp.Or(r.ctx.Err(), errors.New("runlet/temporal: a tool call failed"))
		case errs[k] != nil:
			return nil, errs[k]
		case outs[k].Pending:
			pending = append(pending, i)
		default:
			results[i] = outs[k].Result
			if ref := outs[k].Ref; ref != nil {
				if r.turnRefs == nil {
					r.turnRefs = make(map[int]Ref)
				}
				r.turnRefs[i] = *ref
			}
		}
	}
	return pending, nil
}

// toolWindow is how many of a turn's n tool activities may be outstanding
// at once. Histories recorded before the bound scheduled every call at
// once; the version marker keeps them replaying as they ran.
func (r *wfRun) toolWindow(n int) int {
	w := cmp.Or(max(r.in.ToolConcurrency, 0), defaultToolConcurrency)
	if n > w && workflow.GetVersion(r.ctx, toolWindowChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return n
	}
	return w
}

// toolWindowChange names the change that bounded a turn's tool activities
// (workflow.GetVersion).
const toolWindowChange = "runlet.tool-window"

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
