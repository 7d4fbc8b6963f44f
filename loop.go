package runlet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
)

func (rt *Runtime) newRun(agent *Agent, input string, opts []RunOption, yield func(Event, error) bool) *run {
	r := &run{rt: rt, agent: agent, input: input}
	r.yield = yield
	for _, o := range opts {
		o.applyRun(&r.cfg)
	}
	return r
}

func (rt *Runtime) resumeRun(agent *Agent, runID string, decisions []Decision, yield func(Event, error) bool) *run {
	r := &run{rt: rt, agent: agent}
	r.yield, r.decided = yield, decisions
	r.cfg.runID = runID
	r.resuming = true
	return r
}

// start runs the state machine to a terminal event. The run's context,
// derived from parent once here, carries its RunInfo and is cancelled when
// the run ends or the Stream consumer stops.
func (r *run) start(parent context.Context) {
	r.drive(parent)
	if r.result == nil { // every end sets it; this only keeps Result non-nil
		r.result = &Result{RunID: r.cfg.runID, SessionID: r.cfg.sessionID, Status: StateFailed}
	}
}

func (r *run) drive(parent context.Context) {
	if r.cfg.runID == "" {
		r.cfg.runID = newRunID()
	}
	r.ownInfo = RunInfo{RunID: r.cfg.runID, SessionID: r.cfg.sessionID, state: r.rt.state}
	r.info = &r.ownInfo
	r.ownInfo.mu = &r.infoMu
	if r.agent != nil {
		r.info.Agent = r.agent.Name
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r.ownCtx = runCtx{Context: ctx, info: r.info}
	r.ctx, r.cancel = &r.ownCtx, cancel
	r.state = StateIdle
	if p := r.parent; p != nil {
		// A nested agent shares its caller's events, budget and policies,
		// and its session's state (not its history).
		r.sink, r.ledger, r.scope, r.watched = p.sink, p.ledger, p.scope, p.watched
		r.info.SessionID = p.info.SessionID
	} else {
		r.ownSink = sink{yield: r.yield, cancel: cancel}
		r.sink, r.ledger = &r.ownSink, &r.ownLedger
		// Without observers or a Stream consumer, events that carry nothing
		// the Result does not are not even built.
		r.scope = r.rt.scope.with(r.cfg.scope)
		r.watched = r.yield != nil || len(r.observers) > 0
	}
	// The one place a run fails: each step returns why.
	if err := r.steps(); err != nil && err != errEnded {
		r.fail(err)
	}
}

// errEnded is what a step returns once the run has ended without failing
// (finished or interrupted), or failed where it could not return (see
// collect): there is nothing left to do.
var errEnded = errors.New("runlet: run ended")

// steps runs the run's steps until one ends it: it returns nil or errEnded
// when the run ended, or the error to fail it with.
func (r *run) steps() error {
	if r.agent == nil || r.agent.Model == nil {
		return ErrNoModel
	}
	var calls []ToolCallPart
	var results []ToolResultPart
	var err error
	if r.resuming {
		if calls, results, err = r.startResume(); err != nil {
			return err
		}
	} else if err := r.startFresh(); err != nil {
		return err
	}
	for {
		if calls != nil {
			if err := r.act(calls, results); err != nil {
				return err
			}
			calls, results = nil, nil
			// Decisions and nested checkpoints were for the resumed turn's
			// calls: a later call reusing one's ID (the model chooses IDs)
			// needs a decision of its own.
			r.approved, r.rejected, r.nested, r.nestedDec = nil, nil, nil, nil
		}
		resp, err := r.think()
		if err != nil {
			return err
		}
		calls = r.callsOf(resp.Message)
		if len(calls) == 0 && resp.FinishReason == FinishPause {
			// The provider paused a long turn (Anthropic's pause_turn):
			// its message, now last in the conversation, goes back as it
			// is, and the next model call continues the turn.
			continue
		}
		if len(calls) > 0 {
			r.release() // text before tool calls is not the answer
		}
		if r.out != nil {
			if calls, err = r.checkOutput(resp, calls); err != nil {
				return err
			}
			continue
		}
		if len(calls) == 0 {
			return r.finish(resp)
		}
	}
}

// callsOf is m.ToolCalls() in the run's own buffer when there are few: a
// turn's calls are done with (copied where kept) before the next model
// call.
func (r *run) callsOf(m Message) []ToolCallPart {
	calls := r.turnCallBuf[:0]
	for _, p := range m.Parts {
		if c, ok := p.(ToolCallPart); ok {
			calls = append(calls, c)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return calls
}

// setup derives the run's settings from the agent, the runtime and the run
// options. It fails on an agent the model could not be given.
func (r *run) setup() error {
	a := r.agent
	r.maxTurns = r.rt.maxTurns
	if a.MaxTurns > 0 {
		r.maxTurns = a.MaxTurns
	}
	if r.cfg.maxTurns > 0 {
		r.maxTurns = r.cfg.maxTurns
	}
	r.limits = UsageLimits{}
	if l := cmp.Or(r.cfg.limits, r.rt.limits); l != nil {
		r.limits = *l
	}
	if p := r.parent; p != nil { // the run's limits; max turns per agent
		r.limits = p.limits
		r.maxTurns = cmp.Or(a.MaxTurns, p.maxTurns)
	}
	return r.setupAgent()
}

// setupAgent derives what comes from the current agent: settings,
// options, tools, output schema.
func (r *run) setupAgent() error {
	a := r.agent
	r.settings = a.Settings.merge(r.cfg.settings)
	if err := r.settings.Reasoning.Validate(); err != nil {
		return fmt.Errorf("runlet: agent %q: %w: %w", a.Name, ErrInvalidRequest, err)
	}
	switch {
	case len(r.cfg.options) == 0:
		r.options = a.Options
	case len(a.Options) == 0:
		r.options = r.cfg.options
	default:
		r.options = maps.Clone(a.Options)
		maps.Copy(r.options, r.cfg.options)
	}
	if err := r.loadTools(); err != nil {
		return err
	}
	return r.setupOutput()
}

func (r *run) startFresh() error {
	if err := r.setup(); err != nil {
		return err
	}
	if r.cfg.sessionID != "" {
		if r.rt.sessions == nil {
			return noSessionStore(r.cfg.sessionID)
		}
		hist, err := r.rt.sessions.LoadSession(r.ctx, r.cfg.sessionID)
		if err != nil {
			return fmt.Errorf("runlet: loading session %q: %w", r.cfg.sessionID, err)
		}
		r.sessionLen = len(hist)
		r.history = append(hist, r.cfg.history...)
	} else {
		r.history = r.cfg.history
	}
	// Room for the input and a tool turn's three messages: a short run
	// never grows the list.
	r.added = make([]Message, 0, len(r.cfg.input)+4)
	if r.input != "" {
		r.added = append(r.added, UserText(r.input))
	}
	r.added = append(r.added, r.cfg.input...)
	if r.watched {
		r.emit(&RunStarted{SessionID: r.cfg.sessionID, Input: slices.Clone(r.added)})
	}
	return nil
}

// act runs the tool calls of the last assistant message (Acting), appends
// their results (Observing) and commits the turn. results holds results
// already known for some calls (on resume).
func (r *run) act(calls []ToolCallPart, known []ToolResultPart) error {
	if r.limits.ToolCalls > 0 && r.ledger.tools()+len(calls) > r.limits.ToolCalls {
		return &PolicyError{Policy: "usage_limit:tool_calls", Err: fmt.Errorf("%w: %d tool calls", ErrUsageLimit, r.limits.ToolCalls)}
	}
	r.transition(StateActing)
	results, pending, err := r.runTools(calls, known)
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		return r.interrupt(calls, results, pending)
	}
	r.ledger.addTools(len(calls))
	r.calledTools = true
	parts := make([]Part, len(results))
	for i, res := range results {
		parts[i] = res
	}
	r.added = append(r.added, Message{Role: RoleTool, Parts: parts})
	r.transition(StateObserving)
	if err := r.commit(); err != nil {
		return err
	}
	if r.next != nil {
		if err := r.handOff(); err != nil {
			return err
		}
	}
	// Agents called as tools spend the same budget: stop as soon as it is
	// spent, as if this agent had spent it.
	return r.tokensLeft()
}

// commit appends this run's not yet stored messages to the session. It is
// called only at turn boundaries, so the store never holds a half turn.
func (r *run) commit() error {
	if r.cfg.sessionID == "" || r.committed == len(r.added) {
		return nil
	}
	// Store writes finish even if the run is being cancelled, so a completed
	// turn is not lost.
	ctx := context.WithoutCancel(r.ctx)
	if err := r.rt.sessions.AppendSession(ctx, r.cfg.sessionID, r.sessionLen+r.committed, r.added[r.committed:]); err != nil {
		return fmt.Errorf("runlet: saving session %q: %w", r.cfg.sessionID, err)
	}
	r.committed = len(r.added)
	return nil
}

// finish commits the last turn and ends the run as finished with resp's
// answer. It returns errEnded, or why the commit failed.
func (r *run) finish(resp *ModelResponse) error {
	if err := r.guardOutput(resp); err != nil {
		return err
	}
	r.release()
	if err := r.commit(); err != nil {
		return err
	}
	res := r.snapshot(StateFinished)
	res.Output = resp.Message.Text()
	res.Reasoning = resp.Message.Reasoning()
	r.result = res
	r.transition(StateFinished)
	if r.watched {
		r.emit(&RunFinished{Result: res})
	}
	return errEnded
}

// snapshot returns the Result as the run ends, with status. The run adds
// nothing after it, so the Result takes the run's messages and (for the
// top run) the ledger's maps rather than copies.
func (r *run) snapshot(status RunState) *Result {
	n := len(r.added)
	res := &Result{
		RunID:     r.cfg.runID,
		SessionID: r.cfg.sessionID,
		Status:    status,
		Messages:  r.added[:n:n],
		Usage:     r.usage,
		Cost:      r.cost,
		Turns:     r.info.Turn,
	}
	if r.agent != nil {
		res.Agent = r.agent.Name
	}
	if r.depth == 0 {
		r.ledger.fill(res)
	}
	return res
}

// fail ends the run with err: a *PolicyError when a policy stopped it
// (made by the step that applied the policy, never wrapped), else the
// cause, joined to the context's error if the run was cancelled.
func (r *run) fail(err error) {
	policy := ""
	if pe, ok := err.(*PolicyError); ok {
		policy = pe.Policy
	} else if ce := r.ctx.Err(); ce != nil && !errors.Is(err, ce) {
		err = fmt.Errorf("%w: %w", ce, err)
	}
	r.err = err
	if r.info != nil {
		r.result = r.snapshot(StateFailed)
		if r.state != StateIdle || r.seq > 0 {
			r.transition(StateFailed)
		}
	}
	r.emitTerminal(&RunFailed{Error: err.Error(), ErrorType: errorType(err, policy), Policy: policy, Result: r.result}, err)
}

func (r *run) transition(to RunState) {
	if r.state == to {
		return
	}
	from := r.state
	r.state = to
	if r.watched {
		r.emit(&StateChanged{From: from, To: to})
	}
}

// transcript returns the conversation before the current turn's tool
// calls: what an agent called as a tool WithCallerHistory sees.
func (r *run) transcript() []Message {
	msgs := r.conversation()
	if n := len(msgs); n > 0 && msgs[n-1].Role == RoleAssistant {
		msgs = msgs[:n-1]
	}
	return msgs
}
