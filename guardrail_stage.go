package runlet

import (
	"context"
	"errors"
	"slices"
)

// Where the run meets its guardrails: the input beside the first model
// call, the final answer before the run returns it (and the deltas held
// back or withdrawn meanwhile), and each tool call around the tool.

// inputChecks are the input checks running beside the first model call.
type inputChecks struct {
	set         *checkSet
	cancelModel context.CancelFunc
}

// guardInput runs the input checks at the agent's first model call: the
// Blocking ones to the end, then it starts the others beside the call. It
// returns the call's context, which a tripwire cancels, and the checks to
// wait for (nil without any).
func (r *run) guardInput() (context.Context, *inputChecks, error) {
	r.holding = false
	if r.inputDone {
		r.holdOutput(false)
		return r.ctx, nil, nil
	}
	r.inputDone = true
	var gs []*Guardrail
	if !r.resuming {
		gs = r.guardrails(GuardInput)
	}
	if len(gs) == 0 {
		r.holdOutput(false)
		return r.ctx, nil, nil
	}
	in := GuardrailInput{Agent: r.agent.Name, Input: slices.Clip(r.added), History: slices.Clip(r.history)}
	check := func(ctx context.Context, g *Guardrail) (GuardrailVerdict, error) { return g.Input(ctx, in) }
	var blocking, beside []*Guardrail
	for _, g := range gs {
		if g.Blocking {
			blocking = append(blocking, g)
		} else {
			beside = append(beside, g)
		}
	}
	if len(blocking) > 0 {
		if _, err := r.guardAll(r.ctx, blocking, GuardInput, "", check); err != nil {
			return nil, nil, err
		}
	}
	r.holdOutput(len(beside) > 0)
	if len(beside) == 0 {
		return r.ctx, nil, nil
	}
	ctx, cancel := context.WithCancel(r.ctx)
	set := r.startChecks(r.ctx, beside, GuardInput, "", check, cancel)
	return ctx, &inputChecks{set: set, cancelModel: cancel}, nil
}

// holdOutput decides whether the coming model call's answer deltas are
// held back: WithHeldOutput asked for it, and guardrails are still to pass
// on the answer (input checks running beside the call, or Output checks).
func (r *run) holdOutput(checking bool) {
	r.shown = false
	r.holding = r.cfg.heldOutput && r.depth == 0 && r.sink.yield != nil &&
		(checking || len(r.guardrails(GuardOutput)) > 0)
}

// inputChecked waits for the input checks once the model call returned
// (resp, or callErr). A tripwire wins over the call's outcome: the call it
// cancelled counts as one request of unknown tokens (providers report
// usage at the end of a call), or with its usage if it completed anyway.
// A failed call stops the checks, and its error stands.
func (r *run) inputChecked(c *inputChecks, resp *ModelResponse, callErr error) error {
	if callErr != nil {
		c.set.stop()
	}
	_, err := c.set.wait()
	c.cancelModel()
	if err == nil || (callErr != nil && !isVerdict(err)) {
		return callErr
	}
	if isVerdict(err) {
		if callErr != nil || resp == nil {
			resp = &ModelResponse{Usage: Usage{Requests: 1}}
		}
		r.account(PurposeAgent, resp)
		r.withdraw(err)
	}
	return err
}

// emitAnswer emits a delta of the answer, or holds it back (see
// WithHeldOutput).
func (r *run) emitAnswer(ev Event) {
	if r.holding {
		r.held = append(r.held, ev)
		return
	}
	r.shown = true
	r.emit(ev)
}

// release emits the held deltas: the guardrails on them passed, or the
// response was not the final answer.
func (r *run) release() {
	if len(r.held) == 0 {
		return
	}
	for _, ev := range r.held {
		r.shown = true
		r.emit(ev)
	}
	clear(r.held)
	r.held = r.held[:0]
}

// withdraw takes back what the current call showed of its answer after
// err, a tripwire: held deltas are dropped; deltas shown are withdrawn by
// an OutputWithdrawn event.
func (r *run) withdraw(err error) {
	clear(r.held)
	r.held = r.held[:0]
	if !r.shown || !r.watched {
		return
	}
	r.shown = false
	ev := &OutputWithdrawn{}
	var t *GuardrailTripped
	if errors.As(err, &t) {
		ev.Guardrail, ev.Stage = t.Guardrail, t.Stage
	}
	r.emit(ev)
}

// guardOutput runs the Output checks on the final answer resp. On a
// tripwire the answer is dropped from the run's messages (and so from the
// session): the run does not return it.
func (r *run) guardOutput(resp *ModelResponse) error {
	gs := r.guardrails(GuardOutput)
	if len(gs) == 0 {
		return nil
	}
	out := GuardrailOutput{Agent: r.agent.Name, Text: resp.Message.Text(), Messages: slices.Clip(r.added)}
	if r.out != nil && r.depth == 0 {
		out.Value = r.cfg.output.value
	}
	_, err := r.guardAll(r.ctx, gs, GuardOutput, "", func(ctx context.Context, g *Guardrail) (GuardrailVerdict, error) {
		return g.Output(ctx, out)
	})
	if isVerdict(err) && len(r.added) > 0 {
		r.added = r.added[:len(r.added)-1]
		r.withdraw(err)
	}
	return err
}

// guardedCall is callTool between the ToolCall and ToolResult checks, on
// the worker's goroutine, so a turn's calls are checked concurrently. A
// tripwire comes back in the outcome's trip.
func (r *run) guardedCall(c ToolCallPart, i int, inv *invocation, solo bool) toolOutcome {
	if gs := r.guardrails(GuardToolCall); len(gs) > 0 {
		v, err := r.guardAll(r.ctx, gs, GuardToolCall, c.ID, func(ctx context.Context, g *Guardrail) (GuardrailVerdict, error) {
			return g.ToolCall(ctx, c)
		})
		switch {
		case err != nil && !isVerdict(err):
			return toolOutcome{i: i, content: canceledBeforeRun, kind: ToolCanceled}
		case err != nil:
			return toolOutcome{i: i, trip: err}
		case v.Action == GuardrailReject:
			return toolOutcome{i: i, content: rejectedMessage(v), kind: ToolDenied}
		}
	}
	o := r.callTool(c, i, inv, solo)
	if o.paused != nil || o.trip != nil {
		return o
	}
	if gs := r.guardrails(GuardToolResult); len(gs) > 0 {
		res := outcomeResult(c, o)
		v, err := r.guardAll(r.ctx, gs, GuardToolResult, c.ID, func(ctx context.Context, g *Guardrail) (GuardrailVerdict, error) {
			return g.ToolResult(ctx, c, res)
		})
		switch {
		case err != nil && !isVerdict(err): // the run was cancelled
		case err != nil:
			o.trip = err
		case v.Action == GuardrailReject:
			o.content, o.kind = rejectedMessage(v), ToolDenied
		}
	}
	return o
}

func rejectedMessage(v GuardrailVerdict) string {
	if v.Message == "" {
		return "Error: a guardrail rejected the call."
	}
	return "Error: a guardrail rejected the call: " + v.Message
}

// guardTrip returns the *PolicyError of a tripwire in err (an agent called
// as a tool tripped), or nil.
func guardTrip(err error) error {
	var pe *PolicyError
	if errors.As(err, &pe) && errors.Is(pe.Err, ErrGuardrailTripped) {
		return pe
	}
	return nil
}
