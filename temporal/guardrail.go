package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/workflow"
)

// Guardrails in durable runs (see the package doc, "Guardrails"): each
// check runs in an activity, so its verdict is recorded in the history and
// a replay never runs it again. The input's checks run in their own
// activity before the first model call; the answer's in the model
// activity (Runlet's own Output checks of the one-turn run); a tool call's
// and its result's in the tool activity, around the tool.

// CheckInputActivity names the activity of the input's guardrails.
const CheckInputActivity = "runlet.CheckInput"

// inputGuardChange names the change that added the input's guardrails
// activity (workflow.GetVersion): runs recorded before it replay without.
const inputGuardChange = "runlet.input-guardrails"

// CheckInput is the input of the activity that runs the input's checks.
type CheckInput struct {
	Agent     string           `json:"agent"`
	RunID     string           `json:"run_id"`
	SessionID string           `json:"session_id,omitempty"`
	Input     []runlet.Message `json:"input"`
	// History is the conversation before the input; with a payload store,
	// Base names its stored part and History is what follows.
	History []runlet.Message `json:"history,omitempty"`
	Base    *Ref             `json:"base,omitempty"`
}

// guardrails returns the checks of stage for agent: the agent's own, then
// the worker's (Config.Guardrails).
func (d *Durable) guardrails(agent *runlet.Agent, stage runlet.GuardrailStage) []runlet.Guardrail {
	var out []runlet.Guardrail
	for _, g := range append(append([]runlet.Guardrail(nil), agent.Guardrails...), d.cfg.Guardrails...) {
		if has(g, stage) {
			out = append(out, g)
		}
	}
	return out
}

func has(g runlet.Guardrail, stage runlet.GuardrailStage) bool {
	switch stage {
	case runlet.GuardInput:
		return g.Input != nil
	case runlet.GuardOutput:
		return g.Output != nil
	case runlet.GuardToolCall:
		return g.ToolCall != nil
	case runlet.GuardToolResult:
		return g.ToolResult != nil
	}
	return false
}

// outputOnly returns the Output checks of gs alone: the model activity's
// one-turn run must not check its (empty) input each turn, nor the tool
// calls it holds for the workflow.
func outputOnly(gs []runlet.Guardrail) []runlet.Guardrail {
	var out []runlet.Guardrail
	for _, g := range gs {
		if g.Output != nil {
			out = append(out, runlet.Guardrail{Name: g.Name, Output: g.Output, Timeout: g.Timeout, OnError: g.OnError})
		}
	}
	return out
}

// guardInput runs the input's checks as an activity, once, before the
// first model call (the Blocking way, whatever Blocking says: the model
// call is an activity of its own). Runs recorded before the activity
// existed replay without it.
func (r *wfRun) guardInput() error {
	agent := r.d.agents[r.in.Agent]
	if agent == nil || len(r.d.guardrails(agent, runlet.GuardInput)) == 0 {
		return nil
	}
	if workflow.GetVersion(r.ctx, inputGuardChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	in := CheckInput{Agent: r.in.Agent, RunID: r.runID, SessionID: r.in.SessionID, Input: r.added, History: r.history}
	if r.base != nil {
		in.Base, in.History = r.base, r.history[r.baseLen:]
	}
	return workflow.ExecuteActivity(r.storeCtx(), CheckInputActivity, in).Get(r.ctx, nil)
}

// checkInput is the input's guardrails activity.
func (d *Durable) checkInput(ctx context.Context, in CheckInput) error {
	agent, err := d.agent(in.Agent)
	if err != nil {
		return err
	}
	hist := in.History
	if in.Base != nil {
		base, err := d.loadTranscript(ctx, *in.Base)
		if err != nil {
			return err
		}
		hist = append(base.msgs[:len(base.msgs):len(base.msgs)], hist...)
	}
	g := guard{d: d, agent: in.Agent, runID: in.RunID}
	for _, gr := range d.guardrails(agent, runlet.GuardInput) {
		if _, err := g.check(ctx, gr, runlet.GuardInput, "", func(ctx context.Context) (runlet.GuardrailVerdict, error) {
			return gr.Input(ctx, runlet.GuardrailInput{Agent: in.Agent, Input: in.Input, History: hist})
		}); err != nil {
			return err
		}
	}
	return nil
}

// guard runs checks in an activity, as Runlet's run does: the timeout, a
// panic or an error is the check's failure (OnError says what it does), a
// reject on the input or the answer is a trip, every check is reported
// as a GuardrailChecked event, and a trip is a non-retryable policy error
// ("guardrail:" + name) wrapping a *runlet.GuardrailTripped.
type guard struct {
	d            *Durable
	agent, runID string
	turn         int
}

func (g guard) check(ctx context.Context, gr runlet.Guardrail, stage runlet.GuardrailStage, callID string, f func(context.Context) (runlet.GuardrailVerdict, error)) (runlet.GuardrailVerdict, error) {
	start := time.Now()
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if gr.Timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, gr.Timeout)
	}
	v, err := func() (v runlet.GuardrailVerdict, err error) {
		defer func() {
			if p := recover(); p != nil {
				slog.Default().Error("runlet/temporal: guardrail panicked", "guardrail", gr.Name, "stage", string(stage), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return f(cctx)
	}()
	if err == nil && gr.Timeout > 0 && cctx.Err() != nil {
		err = cctx.Err() // a verdict after the deadline does not count
	}
	cancel()
	if err != nil && ctx.Err() != nil {
		return runlet.GuardrailVerdict{}, ctx.Err() // the activity is ending: retried or cancelled
	}
	ev := &runlet.GuardrailChecked{Guardrail: gr.Name, Stage: stage, CallID: callID, Action: v.Action, Message: v.Message, Duration: time.Since(start)}
	switch {
	case err != nil:
		ev.Error = err.Error()
		v = runlet.GuardrailVerdict{Action: runlet.GuardrailTrip, Message: "the guardrail failed"}
		if gr.OnError == runlet.FailOpen {
			v = runlet.GuardrailVerdict{Action: runlet.GuardrailPass}
		}
		ev.Action, ev.Message = v.Action, v.Message
	case v.Action == "":
		v.Action = runlet.GuardrailPass
	case v.Action == runlet.GuardrailReject && (stage == runlet.GuardInput || stage == runlet.GuardOutput):
		v.Action = runlet.GuardrailTrip
	case v.Action != runlet.GuardrailPass && v.Action != runlet.GuardrailReject && v.Action != runlet.GuardrailTrip:
		ev.Error = fmt.Sprintf("unknown action %q", v.Action)
		v.Action = runlet.GuardrailTrip
	}
	ev.Action = v.Action
	if v.Info != nil {
		if raw, merr := json.Marshal(v.Info); merr == nil {
			ev.Info = raw
		}
	}
	ev.Type = "guardrail.checked"
	ev.RunID, ev.Agent, ev.Turn, ev.Time = g.runID, g.agent, g.turn, time.Now().UTC()
	g.d.observe(ctx, ev)
	if v.Action != runlet.GuardrailTrip {
		return v, nil
	}
	tripped := &runlet.GuardrailTripped{Guardrail: gr.Name, Stage: stage, Agent: g.agent, CallID: callID, Message: v.Message, Info: v.Info}
	if err != nil {
		tripped.Err, tripped.Message = err, ""
	}
	return v, policyError(tripped, "guardrail:"+gr.Name)
}

// rejected is the is-error result of a call or result a guardrail
// rejected, in Runlet's words.
func rejected(v runlet.GuardrailVerdict) runlet.ToolResultPart {
	if v.Message == "" {
		return errorResult("Error: a guardrail rejected the call.")
	}
	return errorResult("Error: a guardrail rejected the call: " + v.Message)
}
