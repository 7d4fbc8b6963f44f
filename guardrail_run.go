package runlet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Running guardrail checks: one check with its timeout, recovered panic
// and failure policy; several at once; and their model calls, made from
// the checks' own goroutines.

// runGuard is a run's guardrail state.
type runGuard struct {
	// guardMu serialises what the checks' model calls add to the agent's
	// usage and cost: checks run on goroutines of their own, while the run
	// goroutine waits for them (see guardCall.model).
	guardMu sync.Mutex
	// muted says a tripwire of this agent was emitted: later deltas are
	// dropped, so nothing of the answer reaches anyone after it. Guarded by
	// the sink's mutex (see emitTerminal).
	muted bool
	// inputDone says the input checks ran (or need not run).
	inputDone bool
	// holding says the current model call's answer deltas are held back
	// (see WithHeldOutput); held are those deltas, and shown says some
	// reached the consumer (to withdraw on a tripwire).
	holding bool
	held    []Event
	shown   bool
	// tripped is a tool check's tripwire, which ends the turn once every
	// call returned (see collect).
	tripped error
}

// guardKey marks a check's context: CallModel finds its *guardCall by it.
type guardKey struct{}

// guardCall is the check a context belongs to.
type guardCall struct {
	r     *run
	check string // see ModelStarted.Check
}

// checkID is what ModelStarted.Check says of a check.
func checkID(g *Guardrail, stage GuardrailStage, callID string) string {
	if callID == "" {
		return g.Name + "/" + string(stage)
	}
	return g.Name + "/" + string(stage) + "/" + callID
}

// guardrails returns the guardrails checking stage: the run's (at the
// top for input and output, everywhere for tools), then the agent's.
func (r *run) guardrails(stage GuardrailStage) []*Guardrail {
	run := r.scope.guardrails
	if r.depth > 0 && (stage == GuardInput || stage == GuardOutput) {
		run = nil
	}
	own := r.agent.Guardrails
	if len(run) == 0 && len(own) == 0 {
		return nil
	}
	var gs []*Guardrail
	for _, list := range [][]Guardrail{run, own} {
		for i := range list {
			if list[i].checks(stage) {
				gs = append(gs, &list[i])
			}
		}
	}
	return gs
}

// checks reports whether g has a check for stage.
func (g *Guardrail) checks(stage GuardrailStage) bool {
	switch stage {
	case GuardInput:
		return g.Input != nil
	case GuardOutput:
		return g.Output != nil
	case GuardToolCall:
		return g.ToolCall != nil
	}
	return g.ToolResult != nil
}

// checkFunc runs one guardrail's check of a stage.
type checkFunc func(ctx context.Context, g *Guardrail) (GuardrailVerdict, error)

// runCheck runs one check on the calling goroutine, within g's timeout,
// recovering a panic. It judges the outcome and reports it (see judge).
func (r *run) runCheck(ctx context.Context, g *Guardrail, stage GuardrailStage, callID string, check checkFunc) (GuardrailVerdict, error) {
	start := time.Now()
	cctx := context.WithValue(ctx, guardKey{}, &guardCall{r: r, check: checkID(g, stage, callID)})
	cancel := context.CancelFunc(func() {})
	if g.Timeout > 0 {
		cctx, cancel = context.WithTimeout(cctx, g.Timeout)
	}
	v, err := func() (v GuardrailVerdict, err error) {
		defer func() {
			if p := recover(); p != nil {
				r.rt.logger.Error("runlet: guardrail panicked", "guardrail", g.Name, "stage", string(stage), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return check(cctx, g)
	}()
	if err == nil && g.Timeout > 0 && cctx.Err() != nil {
		err = cctx.Err() // a verdict given after the deadline does not count
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		err = fmt.Errorf("timed out after %s: %w", g.Timeout, err)
	}
	cancel()
	return r.judge(ctx, g, stage, callID, v, err, time.Since(start))
}

// judge turns a check's outcome into what the run does: the verdict to
// act on (pass or, for the tool stages, reject), or the error that ends
// the run. It reports the check as a GuardrailChecked event, unless ctx
// was cancelled meanwhile: the run is ending for another reason, and a
// check it stopped has nothing to say.
func (r *run) judge(ctx context.Context, g *Guardrail, stage GuardrailStage, callID string, v GuardrailVerdict, err error, dur time.Duration) (GuardrailVerdict, error) {
	if err != nil && ctx.Err() != nil {
		return GuardrailVerdict{}, ctx.Err()
	}
	var pe *PolicyError
	if errors.As(err, &pe) && errors.Is(pe, ErrUsageLimit) {
		return GuardrailVerdict{}, pe // the check's model call spent the run's budget
	}
	ev := &GuardrailChecked{Guardrail: g.Name, Stage: stage, CallID: callID, Action: v.Action, Message: v.Message, Duration: dur}
	switch {
	case err != nil:
		ev.Error = err.Error()
		if g.OnError == FailOpen {
			v = GuardrailVerdict{Action: GuardrailPass}
		} else {
			v = GuardrailVerdict{Action: GuardrailTrip, Message: "the guardrail failed"}
		}
		ev.Action, ev.Message = v.Action, v.Message
	case v.Action == "":
		v.Action, ev.Action = GuardrailPass, GuardrailPass
	case v.Action == GuardrailReject && (stage == GuardInput || stage == GuardOutput):
		v.Action, ev.Action = GuardrailTrip, GuardrailTrip
	case v.Action != GuardrailPass && v.Action != GuardrailReject && v.Action != GuardrailTrip:
		ev.Error = fmt.Sprintf("unknown action %q", v.Action)
		v.Action, ev.Action = GuardrailTrip, GuardrailTrip
	}
	if v.Info != nil {
		if raw, merr := json.Marshal(v.Info); merr == nil {
			ev.Info = raw
		}
	}
	if v.Action != GuardrailTrip {
		if r.watched {
			r.emit(ev)
		}
		return v, nil
	}
	tripped := &GuardrailTripped{Guardrail: g.Name, Stage: stage, Agent: r.agent.Name, CallID: callID, Message: v.Message, Info: v.Info}
	if err != nil {
		tripped.Err, tripped.Message = err, ""
	}
	r.emitTrip(ev)
	return v, &PolicyError{Policy: "guardrail:" + g.Name, Err: tripped}
}

// guardAll runs a stage's checks concurrently (the first on the calling
// goroutine) and returns once all returned: the first reject's verdict,
// or the error of the first tripwire, which cancels the others.
func (r *run) guardAll(ctx context.Context, gs []*Guardrail, stage GuardrailStage, callID string, check checkFunc) (GuardrailVerdict, error) {
	if len(gs) == 1 {
		return r.runCheck(ctx, gs[0], stage, callID, check)
	}
	set := r.startChecks(ctx, gs, stage, callID, check, nil)
	return set.wait()
}

// checkSet is checks running on their own goroutines.
type checkSet struct {
	cancel  context.CancelFunc
	done    chan checkResult // buffered for every check
	n       int
	stopped atomic.Bool // the set was stopped: later failures are not judged
}

type checkResult struct {
	v   GuardrailVerdict
	err error
}

// startChecks starts one goroutine for each check. A tripwire cancels the
// other checks and calls onTrip (which cancels the model call the checks
// run beside) at once, from the check's goroutine.
func (r *run) startChecks(ctx context.Context, gs []*Guardrail, stage GuardrailStage, callID string, check checkFunc, onTrip context.CancelFunc) *checkSet {
	cctx, cancel := context.WithCancel(ctx)
	s := &checkSet{cancel: cancel, done: make(chan checkResult, len(gs)), n: len(gs)}
	for _, g := range gs {
		go func() {
			v, err := r.runCheck(cctx, g, stage, callID, check)
			if err != nil && !s.stopped.Load() {
				if onTrip != nil {
					onTrip()
				}
				s.stop()
			}
			s.done <- checkResult{v, err}
		}()
	}
	return s
}

// stop cancels the checks still running; their failures are not judged.
func (s *checkSet) stop() {
	s.stopped.Store(true)
	s.cancel()
}

// wait waits for every check: it returns the first error (a tripwire) or
// else the first reject.
func (s *checkSet) wait() (GuardrailVerdict, error) {
	defer s.cancel()
	var first GuardrailVerdict
	var firstErr error
	for range s.n {
		res := <-s.done
		switch {
		case isVerdict(res.err) && firstErr == nil:
			firstErr = res.err
		case res.v.Action == GuardrailReject && first.Action == "":
			first = res.v
		}
	}
	if firstErr == nil && s.stopped.Load() {
		firstErr = context.Canceled // stopped from outside, for the run's own reason
	}
	return first, firstErr
}

// isVerdict reports whether err, from judge, ends the run (a tripwire or a
// usage limit) rather than saying that the check was stopped.
func isVerdict(err error) bool {
	var pe *PolicyError
	return errors.As(err, &pe)
}

// emitTrip emits a tripwire's GuardrailChecked and mutes the agent's
// deltas, in one step under the sink's lock: no delta follows it.
func (r *run) emitTrip(ev *GuardrailChecked) {
	r.send(ev, nil, true)
}

// model is CallModel from a check: accounted, limited and reported
// as the run's preparers' calls are, safely from the check's goroutine.
func (gc *guardCall) model(ctx context.Context, purpose string, m Model, req *ModelRequest) (*ModelResponse, error) {
	r := gc.r
	if err := r.requestAllowed(); err != nil {
		return nil, err
	}
	if r.watched {
		r.emit(&ModelStarted{Purpose: purpose, Check: gc.check, Request: req})
	}
	start := time.Now()
	resp, err := m.Generate(ctx, req)
	if err == nil && resp == nil {
		err = &ProviderError{Message: "model returned no response and no error"}
	}
	if err != nil {
		return nil, err
	}
	r.guardMu.Lock()
	_, cost := r.account(purpose, resp)
	r.guardMu.Unlock()
	if r.watched {
		r.emit(&ModelFinished{Purpose: purpose, Check: gc.check, Response: resp, Cost: cost, Duration: time.Since(start)})
	}
	if err := r.tokensLeft(); err != nil {
		return nil, err
	}
	return resp, nil
}
