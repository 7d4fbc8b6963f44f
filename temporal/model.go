package temporal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// The model activity is one turn of Runlet's own loop: a Runtime built for
// the call runs the agent on the workflow's messages, with the worker's
// preparers and model-call hooks, and stops before any tool runs (a
// BeforeToolCall hook asks for approval of every call, so the run ends
// interrupted with the calls pending). Request building, settings, tool
// specs, toolsets, preparers, hooks, deltas and usage accounting are
// therefore exactly Runlet's.

// holdTools holds every tool call of the turn for the workflow.
var holdTools = runlet.Hooks{
	BeforeToolCall: func(context.Context, *runlet.ToolCallPart) (*runlet.ToolResultPart, error) {
		return nil, runlet.ErrApprovalRequired
	},
}

func (d *Durable) modelActivity(ctx context.Context, in ModelInput) (*ModelOutput, error) {
	agent, err := d.agent(in.Agent)
	if err != nil {
		return nil, err
	}
	if in.Model != "" {
		m, ok := d.cfg.Models[in.Model]
		if !ok {
			return nil, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("runlet/temporal: no model %q is registered on this worker", in.Model), ErrTypeUnknownAgent, nil)
		}
		a := *agent
		a.Model = m
		agent = &a
	}
	// The activity's run is one turn, so it cannot see the calls of the
	// turns before: a forced choice ends here, as in Runlet's loop.
	if forced := agent.ToolChoice.Mode; in.ToolsCalled && !agent.KeepToolChoice &&
		(forced == runlet.ToolChoiceRequired || forced == runlet.ToolChoiceTool) {
		a := *agent
		a.ToolChoice = runlet.ToolChoice{Mode: runlet.ToolChoiceAuto}
		agent = &a
	}
	// The answer's guardrails run in the one-turn run, as Runlet's; the
	// input's ran once before the first model call, the tool calls' run
	// in the tool activity.
	if len(agent.Guardrails) > 0 {
		a := *agent
		a.Guardrails = outputOnly(agent.Guardrails)
		agent = &a
	}
	hooks := make([]runlet.Hooks, 0, len(d.cfg.Hooks)+2)
	for _, h := range d.cfg.Hooks {
		if h.BeforeModelCall != nil || h.AfterModelCall != nil {
			hooks = append(hooks, runlet.Hooks{BeforeModelCall: h.BeforeModelCall, AfterModelCall: h.AfterModelCall})
		}
	}
	// Name calls that came without an ID after the turn of the workflow,
	// not of this one-turn run, so they stay unique in the whole run.
	hooks = append(hooks, runlet.Hooks{AfterModelCall: func(_ context.Context, _ *runlet.ModelRequest, resp *runlet.ModelResponse) error {
		nameCalls(resp, in.Turn)
		return nil
	}}, holdTools)
	msgs, transcript, err := d.transcript(ctx, in)
	if err != nil {
		return nil, err
	}
	fwd := &forwarder{d: d, turn: in.Turn, ctx: ctx, pub: newPublisher(ctx, d.cfg.Publisher, in.RunID, in.Turn)}
	// With an output schema, the call checks the answer and asks again,
	// with what is wrong with it, up to the output retries: one model call
	// of the workflow, so that many more calls of the one-turn run.
	turns, retries := 1, cmp.Or(in.OutputRetries, defaultOutputRetries)
	if in.Output != nil || agent.OutputSchema != nil {
		turns += max(retries, 0)
	}
	rtOpts := []runlet.RuntimeOption{
		runlet.WithHooks(hooks...),
		runlet.WithPreparers(d.cfg.Preparers...),
		runlet.WithObservers(fwd),
		runlet.WithMaxTurns(turns),
		runlet.WithGuardrails(outputOnly(d.cfg.Guardrails)...),
	}
	opts := []runlet.RunOption{
		runlet.WithRunID(in.RunID),
		runlet.WithSettings(in.Settings),
		runlet.WithOptions(in.Options),
		runlet.WithOutputRetries(retries),
	}
	if in.Output != nil {
		opts = append(opts, runlet.WithOutputSchema(in.Output))
	}
	if state := d.stateStore(); in.SessionID != "" && state != nil {
		// The session's state, through a run of the session whose history
		// is the transcript (see turnStore).
		rtOpts = append(rtOpts, runlet.WithStore(newTurnStore(msgs, state)))
		opts = append(opts, runlet.WithSession(in.SessionID))
	} else {
		opts = append(opts, runlet.WithHistory(msgs...))
	}
	rt := runlet.NewRuntime(rtOpts...)
	var res *runlet.Result
	if d.cfg.Stream || d.cfg.Publisher != nil {
		for ev, e := range rt.Stream(ctx, agent, "", opts...) {
			switch ev := ev.(type) {
			case *runlet.RunFinished:
				res = ev.Result
			case *runlet.RunInterrupted:
				res = ev.Result
			case *runlet.RunFailed:
				res, err = ev.Result, e
			}
		}
	} else {
		res, err = rt.Run(ctx, agent, "", opts...)
	}
	if err != nil && errors.Is(err, runlet.ErrMaxTurns) && fwd.finishReason() == runlet.FinishPause && res != nil {
		// The model paused its turn (runlet.FinishPause) and the one-turn
		// run stopped before continuing it: the workflow continues it,
		// with a model call of its own.
		err = nil
	}
	if err != nil {
		return nil, activityError(ctx, err)
	}
	if res == nil || len(res.Messages) == 0 {
		return nil, temporal.NewNonRetryableApplicationError("runlet/temporal: the model call added no message", ErrTypeRun, nil)
	}
	return &ModelOutput{
		Before:         res.Messages[:len(res.Messages)-1],
		Message:        res.Messages[len(res.Messages)-1],
		FinishReason:   fwd.finishReason(),
		Turns:          res.Turns,
		Usage:          res.Usage,
		UsageByPurpose: res.UsageByPurpose,
		Transcript:     transcript,
	}, nil
}

// transcript returns the messages of the call's request: in.Messages, or,
// with a payload store, the stored transcript in.Base names followed by
// in.Messages with their parts read back, which it stores as the next
// chunk (the Ref it returns).
func (d *Durable) transcript(ctx context.Context, in ModelInput) ([]runlet.Message, *Ref, error) {
	if d.cfg.Payloads == nil && in.Base == nil && len(in.Refs) == 0 {
		return in.Messages, nil, nil
	}
	var base cached
	if in.Base != nil {
		var err error
		if base, err = d.loadTranscript(ctx, *in.Base); err != nil {
			return nil, nil, err
		}
	}
	if d.cfg.Payloads == nil { // a run that used a store, on a worker without: getPayload says so
		msgs, err := resolve(ctx, nil, in.Messages, in.Refs)
		return append(slices.Clip(base.msgs), msgs...), nil, err
	}
	ref, all, err := d.putTranscript(ctx, in.Base, base, in.Messages, in.Refs)
	if err != nil {
		return nil, nil, err
	}
	return all, &ref, nil
}

// nameCalls gives tool calls without an ID (some servers send none), or
// with the ID of an earlier call of the same message, one unique in the
// run, so that each result, and each decision, names one call (as
// Runlet's loop does).
func nameCalls(resp *runlet.ModelResponse, turn int) {
	parts := resp.Message.Parts
	cloned := false
	for i, p := range parts {
		c, ok := p.(runlet.ToolCallPart)
		if !ok || c.ID != "" && !idUsed(parts[:i], c.ID) {
			continue
		}
		if !cloned { // the model may share its parts
			parts, cloned = slices.Clone(parts), true
			resp.Message.Parts = parts
		}
		c.ID = fmt.Sprintf("call_t%d_%d", turn, i)
		for idUsed(parts[:i], c.ID) {
			c.ID += "_"
		}
		parts[i] = c
	}
}

// idUsed reports whether a call in before has the ID id.
func idUsed(before []runlet.Part, id string) bool {
	for _, p := range before {
		if c, ok := p.(runlet.ToolCallPart); ok && c.ID == id {
			return true
		}
	}
	return false
}

// activityError turns a run's error into the activity's: a policy or a
// non-retryable provider error is never retried, a provider's Retry-After
// sets the next attempt's delay, a cancellation stays one.
func activityError(ctx context.Context, err error) error {
	var pol *runlet.PolicyError
	var pe *runlet.ProviderError
	var oe *runlet.OutputError
	var re *runlet.RefusalError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &oe):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeOutput, nil, oe)
	case errors.As(err, &re):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRefusal, nil, re.Text)
	case errors.As(err, &pol):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypePolicy, err, pol.Policy)
	case errors.As(err, &pe):
		return temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeProvider, temporal.ApplicationErrorOptions{
			NonRetryable:   !pe.Retryable,
			NextRetryDelay: pe.RetryAfter,
			Details:        []any{pe.StatusCode, pe.Code},
		})
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRun, err)
}

// forwarder passes the one-turn run's model events to the worker's
// observers, labelled with the workflow's turn, and heartbeats on deltas.
type forwarder struct {
	d    *Durable
	ctx  context.Context
	turn int
	pub  *publisher // nil without Config.Publisher

	mu     sync.Mutex
	finish runlet.FinishReason
}

func (f *forwarder) finishReason() runlet.FinishReason {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.finish
}

func (f *forwarder) Observe(ctx context.Context, ev runlet.Event) {
	switch e := ev.(type) {
	case *runlet.ModelFinished:
		if e.Purpose == runlet.PurposeAgent && e.Response != nil {
			f.mu.Lock()
			f.finish = e.Response.FinishReason
			f.mu.Unlock()
		}
		if e.Purpose == runlet.PurposeAgent {
			f.pub.publish(ctx, DeltaEnd, "")
		}
	case *runlet.TextDelta:
		activity.RecordHeartbeat(f.ctx)
		f.pub.publish(ctx, DeltaText, e.Delta)
	case *runlet.ReasoningDelta:
		activity.RecordHeartbeat(f.ctx)
		f.pub.publish(ctx, DeltaReasoning, e.Delta)
	case *runlet.ToolCallDelta, *runlet.OutputPartial:
		activity.RecordHeartbeat(f.ctx)
	case *runlet.OutputWithdrawn:
		f.pub.publish(ctx, DeltaWithdrawn, "")
	case *runlet.ContextPrepared, *runlet.ModelStarted, *runlet.OutputChecked, *runlet.GuardrailChecked:
	default:
		return // the one-turn run's own run and state events are not the workflow's
	}
	restamp(ev, f.turn)
	f.d.observe(ctx, ev)
}
