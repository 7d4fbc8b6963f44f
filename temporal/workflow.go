package temporal

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// wfRun is one run of the workflow. Everything in it is workflow state,
// changed only by workflow code, so a replay rebuilds it exactly.
type wfRun struct {
	d     *Durable
	ctx   workflow.Context
	in    RunInput
	runID string
	agent string

	seq      int64
	state    runlet.RunState
	turn     int
	maxTurns int

	history    []runlet.Message // before the run: the session's, then in.History
	sessionLen int
	added      []runlet.Message // what the run added
	committed  int              // how many of added are in the session

	// With a payload store: refs name the parts of added kept in the
	// store (turnRefs those of the turn's results, by call), base the
	// stored transcript of the first baseLen messages of history+added.
	refs     []PartRef
	turnRefs map[int]Ref
	base     *Ref
	baseLen  int

	usage     runlet.Usage
	byPurpose map[string]runlet.Usage
	toolCalls int

	pending   []runlet.ToolCallPart
	decisions []runlet.Decision // set by the decide update
}

// runWorkflow is the workflow: Runlet's loop with each model call and each
// tool call an activity.
func (d *Durable) runWorkflow(ctx workflow.Context, in RunInput) (*workflowResult, error) {
	r := &wfRun{
		d:     d,
		ctx:   ctx,
		in:    in,
		runID: cmp.Or(in.RunID, workflow.GetInfo(ctx).WorkflowExecution.ID),
		agent: in.Agent,
		state: runlet.StateIdle,
	}
	if err := r.handlers(); err != nil {
		return nil, err
	}
	agent, ok := d.agents[in.Agent]
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("runlet/temporal: no agent %q is registered on this worker", in.Agent), ErrTypeUnknownAgent, nil)
	}
	r.maxTurns = cmp.Or(in.MaxTurns, agent.MaxTurns, defaultMaxTurns)
	return r.run()
}

func (r *wfRun) handlers() error {
	if err := workflow.SetQueryHandler(r.ctx, PendingQuery, func() ([]runlet.ToolCallPart, error) {
		return r.pending, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(r.ctx, ProgressQuery, func() (Progress, error) {
		return Progress{RunID: r.runID, Agent: r.agent, State: r.state, Turn: r.turn, ToolCalls: r.toolCalls,
			Usage: r.usage, Pending: r.pending, Messages: len(r.added)}, nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(r.ctx, DecideUpdate,
		func(_ workflow.Context, ds []runlet.Decision) error {
			r.decisions = ds
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, ds []runlet.Decision) error {
			if len(r.pending) == 0 || r.decisions != nil {
				return errors.New("runlet/temporal: the run is not waiting for decisions")
			}
			if err := checkDecisions(r.pending, ds); err != nil {
				return err
			}
			return r.checkEdits(ds)
		}})
}

// checkEdits checks edited arguments against the input schema of the
// agent's tool, as the tool would before running: a person's mistake is
// refused to the person (the update fails, the run keeps waiting), not
// shown to the model as its own. A tool the agent does not list (one of
// a Toolset's, found only by the activity) is checked when it runs.
func (r *wfRun) checkEdits(ds []runlet.Decision) error {
	agent := r.d.agents[r.in.Agent]
	if agent == nil {
		return nil
	}
	for _, d := range ds {
		if !d.Approve || len(d.Arguments) == 0 {
			continue
		}
		i := slices.IndexFunc(r.pending, func(c runlet.ToolCallPart) bool { return c.ID == d.CallID })
		for _, t := range agent.Tools {
			if t == nil || t.Spec().Name != r.pending[i].Name {
				continue
			}
			if err := validateArgs(t.Spec().InputSchema, d.Arguments); err != nil {
				return fmt.Errorf("runlet/temporal: the input schema of tool %q rejects the edited arguments for call %q: %w", t.Spec().Name, d.CallID, err)
			}
			break
		}
	}
	return nil
}

// validateArgs checks args against schema (nil accepts anything).
func validateArgs(schema *jsonschema.Schema, args json.RawMessage) error {
	if schema == nil {
		return nil
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		return nil // the tool's own problem, reported when it runs
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return err
	}
	return rs.Validate(v)
}

// checkDecisions requires exactly one decision per pending call, and
// edited arguments that are JSON. The update's validator applies it, so a
// decision that is refused changes nothing: a call that needs approval
// runs only with an approving decision for its ID delivered by the
// update, never for a call that is not pending (the run's own history
// says which are).
func checkDecisions(pending []runlet.ToolCallPart, ds []runlet.Decision) error {
	seen := make(map[string]bool, len(ds))
	for _, d := range ds {
		if !slices.ContainsFunc(pending, func(c runlet.ToolCallPart) bool { return c.ID == d.CallID }) {
			return fmt.Errorf("runlet/temporal: decision for %q, which is not a pending call", d.CallID)
		}
		if seen[d.CallID] {
			return fmt.Errorf("runlet/temporal: two decisions for call %q", d.CallID)
		}
		if d.Approve && len(d.Arguments) > 0 && !isJSONObject(d.Arguments) {
			return fmt.Errorf("runlet/temporal: edited arguments for call %q are not a JSON object", d.CallID)
		}
		seen[d.CallID] = true
	}
	for _, c := range pending {
		if !seen[c.ID] {
			return fmt.Errorf("runlet/temporal: no decision for pending call %q (%s)", c.ID, c.Name)
		}
	}
	return nil
}

// isJSONObject reports whether b is one valid JSON object.
func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

func (r *wfRun) run() (*workflowResult, error) {
	if r.in.SessionID != "" {
		var load sessionLoad
		if err := workflow.ExecuteActivity(r.storeCtx(), LoadSessionActivity, r.in.SessionID).Get(r.ctx, &load); err != nil {
			return r.fail(err, "")
		}
		if load.Ref != nil { // the session is in the payload store
			r.sessionLen, r.base, r.baseLen = load.Len, load.Ref, load.Len
			r.history = make([]runlet.Message, load.Len)
		} else {
			r.sessionLen, r.history = len(load.Messages), load.Messages
		}
	}
	r.history = append(r.history, r.in.History...)
	if r.in.Input != "" {
		r.added = append(r.added, runlet.UserText(r.in.Input))
	}
	r.added = append(r.added, r.in.Messages...)
	r.emit(&runlet.RunStarted{SessionID: r.in.SessionID, Input: slices.Clone(r.added)})
	if err := r.guardInput(); err != nil {
		return r.fail(err, "")
	}
	for {
		out, err := r.think()
		if err != nil {
			return r.fail(err, "")
		}
		calls := out.Message.ToolCalls()
		if len(calls) == 0 && out.FinishReason == runlet.FinishPause {
			// The provider paused a long turn: its message goes back as
			// it is, and the next model call continues the turn (see
			// runlet.FinishPause).
			continue
		}
		if len(calls) == 0 {
			return r.finish(out.Message)
		}
		if l := r.in.Limits.ToolCalls; l > 0 && r.toolCalls+len(calls) > l {
			return r.fail(fmt.Errorf("%w: %d tool calls", runlet.ErrUsageLimit, l), "usage_limit:tool_calls")
		}
		results, err := r.act(calls)
		if err != nil {
			return r.fail(err, "")
		}
		r.toolCalls += len(calls)
		parts := make([]runlet.Part, len(results))
		for i, res := range results {
			parts[i] = res
			if ref, ok := r.turnRefs[i]; ok {
				r.refs = append(r.refs, PartRef{Msg: len(r.added), Part: i, Ref: ref})
			}
		}
		r.added = append(r.added, runlet.Message{Role: runlet.RoleTool, Parts: parts})
		r.transition(runlet.StateObserving)
		if err := r.commit(); err != nil {
			return r.fail(err, "")
		}
	}
}

// think is one model call, as an activity.
func (r *wfRun) think() (*ModelOutput, error) {
	if r.turn >= r.maxTurns {
		return nil, &runlet.PolicyError{Policy: "max_turns", Err: fmt.Errorf("%w (%d)", runlet.ErrMaxTurns, r.maxTurns)}
	}
	if l := r.in.Limits.Requests; l > 0 && r.usage.Requests >= l {
		return nil, &runlet.PolicyError{Policy: "usage_limit:requests", Err: fmt.Errorf("%w: %d model requests", runlet.ErrUsageLimit, l)}
	}
	r.transition(runlet.StateThinking)
	r.turn++
	msgs := make([]runlet.Message, 0, len(r.history)+len(r.added))
	msgs = append(append(msgs, r.history...), r.added...)
	actx := workflow.WithActivityOptions(r.ctx, r.d.cfg.ModelActivity.workflowOptions(0))
	in := ModelInput{
		Agent: r.in.Agent, Model: r.in.Model, RunID: r.runID, SessionID: r.in.SessionID, Turn: r.turn,
		Messages: msgs, Settings: r.in.Settings, Options: r.in.Options, ToolsCalled: r.toolCalls > 0,
		Refs: shiftRefs(r.refs, -len(r.history)), Output: r.in.Output, OutputRetries: r.in.OutputRetries,
	}
	if r.base != nil { // the stored transcript and what is new
		in.Base, in.Messages, in.Refs = r.base, msgs[r.baseLen:], shiftRefs(in.Refs, r.baseLen)
	}
	var out ModelOutput
	if err := workflow.ExecuteActivity(actx, ModelActivityName, in).Get(r.ctx, &out); err != nil {
		return nil, err
	}
	if out.Transcript != nil {
		r.base, r.baseLen = out.Transcript, len(msgs)
	}
	r.usage = r.usage.Add(out.Usage)
	if r.byPurpose == nil {
		r.byPurpose = make(map[string]runlet.Usage, len(out.UsageByPurpose))
	}
	for _, p := range slices.Sorted(maps.Keys(out.UsageByPurpose)) {
		r.byPurpose[p] = r.byPurpose[p].Add(out.UsageByPurpose[p])
	}
	r.added = append(append(r.added, out.Before...), out.Message)
	if out.Turns > 0 {
		r.turn += out.Turns - 1 // repairs and continuations: more model calls
	} else { // a result recorded before Turns
		r.turn += len(out.Before) / 2 // each repair: a rejected answer, what was wrong, one more model call
	}
	if policy, err := checkTokens(r.in.Limits, r.usage); err != nil {
		return nil, &runlet.PolicyError{Policy: policy, Err: err}
	}
	return &out, nil
}

func checkTokens(l runlet.UsageLimits, u runlet.Usage) (string, error) {
	for _, c := range []struct {
		name        string
		limit, used int
	}{
		{"input_tokens", l.InputTokens, u.InputTokens},
		{"output_tokens", l.OutputTokens, u.OutputTokens},
		{"total_tokens", l.TotalTokens, u.TotalTokens},
	} {
		if c.limit > 0 && c.used > c.limit {
			return "usage_limit:" + c.name, fmt.Errorf("%w: %s %d > %d", runlet.ErrUsageLimit, c.name, c.used, c.limit)
		}
	}
	return "", nil
}

// commit appends the run's messages not yet in the session, at a turn
// boundary, so the session never holds half a turn.
func (r *wfRun) commit() error {
	if r.in.SessionID == "" || r.committed == len(r.added) {
		return nil
	}
	err := workflow.ExecuteActivity(r.storeCtx(), AppendSessionActivity, AppendInput{
		SessionID: r.in.SessionID, After: r.sessionLen + r.committed, Messages: r.added[r.committed:],
		Refs: shiftRefs(r.refs, r.committed),
	}).Get(r.ctx, nil)
	if err != nil {
		return err
	}
	r.committed = len(r.added)
	return nil
}

func (r *wfRun) storeCtx() workflow.Context {
	return workflow.WithActivityOptions(r.ctx, ActivityOptions{StartToClose: time.Minute}.workflowOptions(0))
}

func (r *wfRun) snapshot(status runlet.RunState) *runlet.Result {
	return &runlet.Result{
		RunID:          r.runID,
		SessionID:      r.in.SessionID,
		Status:         status,
		Messages:       slices.Clone(r.added),
		Usage:          r.usage,
		UsageByPurpose: maps.Clone(r.byPurpose),
		Turns:          r.turn,
	}
}

func (r *wfRun) finish(m runlet.Message) (*workflowResult, error) {
	if err := r.commit(); err != nil {
		return r.fail(err, "")
	}
	res := r.snapshot(runlet.StateFinished)
	res.Output, res.Reasoning = m.Text(), m.Reasoning()
	r.transition(runlet.StateFinished)
	r.emit(&runlet.RunFinished{Result: res})
	return &workflowResult{Result: *res, Refs: slices.Clone(r.refs)}, nil
}

// fail ends the run: a RunFailed event, and the error the workflow fails
// with, carrying the partial Result (see Wait). A cancelled run stays a
// cancellation.
func (r *wfRun) fail(err error, policy string) (*workflowResult, error) {
	var pol *runlet.PolicyError
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &pol):
		policy = pol.Policy
	case errors.As(err, &app) && app.Type() == ErrTypePolicy:
		_ = app.Details(&policy)
	}
	res := r.snapshot(runlet.StateFailed)
	msg, errType := err.Error(), policy
	if app != nil || errors.As(err, &app) {
		msg = app.Message()
	}
	switch {
	case errType != "":
	case temporal.IsCanceledError(err):
		errType = "canceled"
	case app != nil && app.Type() == ErrTypeProvider:
		var status int
		var code string
		if app.Details(&status, &code) == nil && status != 0 {
			errType = strconv.Itoa(status)
		} else {
			errType = cmp.Or(code, "error")
		}
	default:
		errType = "error"
	}
	r.transition(runlet.StateFailed)
	r.emit(&runlet.RunFailed{Error: msg, ErrorType: errType, Policy: policy, Result: res})
	if temporal.IsCanceledError(err) {
		return &workflowResult{Result: *res, Refs: slices.Clone(r.refs)}, err
	}
	typ := ErrTypeRun
	switch {
	case policy != "":
		typ = ErrTypePolicy
	case errors.As(err, &app):
		typ = app.Type()
	}
	fd := failureDetails{Policy: policy, Result: res, Refs: slices.Clone(r.refs)}
	if app != nil {
		switch app.Type() {
		case ErrTypeOutput:
			fd.Output = new(runlet.OutputError)
			if app.Details(fd.Output) != nil {
				fd.Output = nil
			}
		case ErrTypeRefusal:
			_ = app.Details(&fd.Refusal)
		}
	}
	return nil, temporal.NewNonRetryableApplicationError(msg, typ, nil, fd)
}

func (r *wfRun) transition(to runlet.RunState) {
	if r.state == to {
		return
	}
	from := r.state
	r.state = to
	r.emit(&runlet.StateChanged{From: from, To: to})
}

// emit numbers ev and, unless the workflow is replaying, gives it to the
// worker's observers. Observers cannot change the workflow, so calling
// them is no break of determinism; skipping them on replay keeps them from
// seeing an event twice when a worker rebuilds a run from its history.
func (r *wfRun) emit(ev runlet.Event) {
	r.seq++
	if len(r.d.cfg.Observers) == 0 || workflow.IsReplaying(r.ctx) {
		return
	}
	h := header(ev)
	h.RunID, h.Seq, h.Time, h.Agent, h.Turn = r.runID, r.seq, workflow.Now(r.ctx).UTC(), r.agent, r.turn
	r.d.observe(context.Background(), ev)
}
