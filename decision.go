package runlet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
)

// Decision is a human's answer to a call waiting for approval.
type Decision struct {
	CallID  string `json:"call_id"`
	Approve bool   `json:"approve"`
	// Reason is shown to the model when the call is rejected.
	Reason string `json:"reason,omitempty"`
	// Arguments, when set on an approval, replace the call's arguments:
	// a JSON object, checked against the tool's input schema before
	// Resume acts (see ApproveWithArguments).
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Approve approves a pending call.
func Approve(callID string) Decision { return Decision{CallID: callID, Approve: true} }

// ApproveWithArguments approves a pending call with edited arguments, a
// JSON object; it keeps its own copy of args.
//
// The edit replaces the call itself, not only what the tool is given: the
// tool runs with args, and Result.Messages, the session, a later
// checkpoint and the next model request show args in the call. The
// call keeps what the model proposed in ToolCallPart.OriginalArguments,
// which ToolStarted and ToolFinished carry too, so an audit can tell what
// a person changed. Arguments equal (as JSON text, ignoring insignificant
// space) to the model's are no edit.
//
// Resume refuses edited arguments that are not a JSON object or that the
// tool's input schema rejects (for tools made with NewTool or AsTool, as
// the run checks a model's calls) with a *DecisionError, before any tool
// runs and without consuming the checkpoint: the person can correct them
// and resume again. The model never sees a person's mistake as its own.
func ApproveWithArguments(callID string, args json.RawMessage) Decision {
	return Decision{CallID: callID, Approve: true, Arguments: bytes.Clone(args)}
}

// Reject rejects a pending call; the model sees reason in an is-error result.
func Reject(callID, reason string) Decision {
	return Decision{CallID: callID, Reason: reason}
}

// ErrInvalidDecision means Resume refused the decisions it was given — one for
// a call that is not pending, two for one call, none for a pending call,
// or edited arguments that are not a JSON object or fail the tool's
// schema. Nothing ran and the checkpoint is not consumed. Every such error
// is a *DecisionError.
var ErrInvalidDecision = errors.New("runlet: invalid decision")

// DecisionError is why Resume refused the decisions. It matches
// ErrInvalidDecision with errors.Is, and Err (such as a *ToolError of
// kind ToolInvalidArgs for edited arguments the schema rejects) too.
type DecisionError struct {
	CallID string // the call the decision is (or is missing) for
	Reason string
	Err    error
}

func (e *DecisionError) Error() string {
	msg := "runlet: decision for call " + strconv.Quote(e.CallID) + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrInvalidDecision and Err.
func (e *DecisionError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidDecision}
	}
	return []error{ErrInvalidDecision, e.Err}
}

func checkDecisions(pending []ToolCallPart, decisions []Decision) error {
	want := make(map[string]bool, len(pending))
	for _, c := range pending {
		want[c.ID] = true
	}
	seen := make(map[string]bool, len(decisions))
	for _, d := range decisions {
		if !want[d.CallID] {
			return &DecisionError{CallID: d.CallID, Reason: "no such call waits for a decision"}
		}
		if seen[d.CallID] {
			return &DecisionError{CallID: d.CallID, Reason: "two decisions for the call"}
		}
		if d.Approve && len(d.Arguments) > 0 && !isJSONObject(d.Arguments) {
			return &DecisionError{CallID: d.CallID, Reason: "edited arguments are not a JSON object"}
		}
		seen[d.CallID] = true
	}
	for _, c := range pending {
		if !seen[c.ID] {
			return &DecisionError{CallID: c.ID, Reason: "no decision for the pending call (" + c.Name + ")"}
		}
	}
	return nil
}

func decisionsByID(decisions []Decision) map[string]Decision {
	byID := make(map[string]Decision, len(decisions))
	for _, d := range decisions {
		byID[d.CallID] = d
	}
	return byID
}

// isJSONObject reports whether b is one valid JSON object.
func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// checkEdits checks edited arguments against the schemas of the tools of
// the pending calls of cp, its own and its nested agents' (a is the agent
// at cp's level, tool finds its tools), as a run checks a model's calls.
func checkEdits(ctx context.Context, cp *Checkpoint, a *Agent, tool func(string) (Tool, error), byID map[string]Decision) error {
	for _, c := range cp.Pending {
		d, ok := byID[c.ID]
		if !ok || !d.Approve || len(d.Arguments) == 0 {
			continue
		}
		t, err := tool(c.Name)
		if err != nil {
			return err
		}
		var verr error
		switch t := t.(type) {
		case *funcTool:
			verr = t.validateArgs(d.Arguments, true)
		case *agentTool:
			verr = t.in.validateArgs(d.Arguments, true)
		}
		if verr != nil {
			return &DecisionError{CallID: c.ID, Reason: "the input schema of tool " + strconv.Quote(c.Name) + " rejects the edited arguments", Err: verr}
		}
	}
	if len(cp.Nested) == 0 {
		return nil
	}
	for _, c := range cp.Messages[len(cp.Messages)-1].ToolCalls() {
		n := cp.Nested[c.ID]
		if n == nil {
			continue
		}
		t, err := tool(c.Name)
		if err != nil {
			return err
		}
		at, ok := t.(*agentTool)
		if !ok { // checkNestedTools refused it already
			continue
		}
		inner := at.agent
		if n.Agent != "" && n.Agent != inner.Name {
			if inner = findAgent(at.agent, n.Agent); inner == nil {
				continue
			}
		}
		if err := checkEdits(ctx, n, inner, func(name string) (Tool, error) { return toolNamed(ctx, inner, name) }, byID); err != nil {
			return err
		}
	}
	return nil
}

// applyEdits makes the approvals with edited arguments part of the calls:
// in calls (what runs, and what ToolStarted and ToolFinished show) and in
// the interrupted assistant message, the last of r.added, so that the
// Result, the session, a later checkpoint and the next model request show
// what ran. The model's arguments stay in OriginalArguments.
func (r *run) applyEdits(calls []ToolCallPart, byID map[string]Decision) {
	var edited map[string]json.RawMessage
	for i, c := range calls {
		d, ok := byID[c.ID]
		if !ok || !d.edits(c) {
			continue
		}
		calls[i] = editCall(c, d.Arguments)
		if edited == nil {
			edited = make(map[string]json.RawMessage)
		}
		edited[c.ID] = d.Arguments
	}
	if edited == nil {
		return
	}
	// The checkpoint's messages may be shared (a nested agent's are its
	// caller's): change copies.
	n := len(r.added) - 1
	r.added = slices.Clone(r.added)
	last := r.added[n]
	last.Parts = slices.Clone(last.Parts)
	for j, p := range last.Parts {
		if c, ok := p.(ToolCallPart); ok && edited[c.ID] != nil {
			last.Parts[j] = editCall(c, edited[c.ID])
		}
	}
	r.added[n] = last
}

// Edit returns call as it runs under d: with d's edited arguments and the
// model's kept in OriginalArguments, or call itself when d is not an
// approval with arguments that differ from the call's (as JSON text,
// ignoring insignificant space). The runtime applies it on Resume; a
// runtime of its own, such as runlet/temporal's workflow, applies it the
// same way.
func (d Decision) Edit(call ToolCallPart) ToolCallPart {
	if !d.edits(call) {
		return call
	}
	return editCall(call, d.Arguments)
}

// edits reports whether d changes call's arguments.
func (d Decision) edits(call ToolCallPart) bool {
	return d.Approve && len(d.Arguments) > 0 && !sameJSON(d.Arguments, call.Arguments)
}

// editCall returns c with args as its arguments, keeping the model's.
func editCall(c ToolCallPart, args json.RawMessage) ToolCallPart {
	if len(c.OriginalArguments) == 0 { // edited before: keep the model's
		c.OriginalArguments = bytes.Clone(c.Arguments)
		if len(c.OriginalArguments) == 0 {
			c.OriginalArguments = json.RawMessage("{}")
		}
	}
	c.Arguments = bytes.Clone(args)
	return c
}

// sameJSON reports whether a and b are the same JSON text but for
// insignificant space.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}
