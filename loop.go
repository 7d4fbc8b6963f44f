package runlet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// run is one execution of the state machine. Run, Stream, Resume and
// ResumeStream all drive the same run.start; they differ only in whether
// events are yielded to a caller and whether the model is streamed.
type run struct {
	rt     *Runtime
	agent  *Agent
	ctx    context.Context
	cancel context.CancelFunc
	info   *RunInfo

	yield   func(Event, error) bool // nil for Run/Resume
	stopped bool                    // the Stream consumer stopped ranging
	watched bool                    // someone sees events: a Stream consumer or observers

	input    string
	cfg      runConfig
	resuming bool
	decided  []Decision
	approved map[string]bool // calls a human approved on resume
	rejected map[string]bool // calls a human rejected on resume

	seq   int64
	state RunState
	tools map[string]Tool
	specs []ToolSpec
	// toolsLoaded says tools are current for the next model call.
	toolsLoaded bool

	history    []Message // before this run
	sessionLen int       // session messages the run started after
	added      []Message // this run's messages
	committed  int       // how many of added are in the session store
	usage      Usage
	byPurpose  map[string]Usage // usage split by the purpose of the call
	limitHit   string           // policy of the usage limit a preparer's call hit
	toolCalls  int
	scope                  // the run's observers, hooks, preparers and tool limits over the Runtime's
	maxTurns   int         // resolved: run, else agent, else Runtime
	limits     UsageLimits // resolved: run, else Runtime
	options    map[string]any
	settings   Settings

	out *outputState // nil without an output schema

	result *Result
	err    error
}

func (rt *Runtime) newRun(ctx context.Context, agent *Agent, input string, opts []RunOption, yield func(Event, error) bool) *run {
	r := &run{rt: rt, agent: agent, ctx: ctx, yield: yield, input: input}
	for _, o := range opts {
		o.applyRun(&r.cfg)
	}
	return r
}

func (rt *Runtime) resumeRun(ctx context.Context, agent *Agent, runID string, decisions []Decision, yield func(Event, error) bool) *run {
	r := &run{rt: rt, agent: agent, ctx: ctx, yield: yield, decided: decisions}
	r.cfg.runID = runID
	r.resuming = true
	return r
}

// start runs the state machine to a terminal event.
func (r *run) start() {
	if r.cfg.runID == "" {
		r.cfg.runID = newRunID()
	}
	r.result = &Result{RunID: r.cfg.runID, SessionID: r.cfg.sessionID, Status: StatusFailed}
	r.state = StateIdle
	// Without observers or a Stream consumer, events that carry nothing the
	// Result does not are not even built.
	r.scope = r.rt.scope.with(r.cfg.scope)
	r.watched = r.yield != nil || len(r.observers) > 0
	if r.agent == nil || r.agent.Model == nil {
		r.fail(ErrNoModel, "")
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	r.cancel = cancel
	r.info = &RunInfo{RunID: r.cfg.runID, SessionID: r.cfg.sessionID, Agent: r.agent.Name, state: r.rt.state}
	r.ctx = context.WithValue(ctx, runInfoKey{}, r.info)

	var calls []ToolCallPart
	var results []ToolResultPart
	if r.resuming {
		var ok bool
		if calls, results, ok = r.startResume(); !ok {
			return
		}
	} else if !r.startFresh() {
		return
	}
	for {
		if calls != nil {
			if !r.act(calls, results) {
				return
			}
			calls, results = nil, nil
		}
		resp, ok := r.think()
		if !ok {
			return
		}
		calls = resp.Message.ToolCalls()
		if r.out != nil {
			if calls, ok = r.checkOutput(resp, calls); !ok {
				return
			}
			continue
		}
		if len(calls) == 0 {
			r.finish(resp)
			return
		}
	}
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
	r.settings = a.Settings.merge(r.cfg.settings)
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

func (r *run) startFresh() bool {
	if err := r.setup(); err != nil {
		r.fail(err, "")
		return false
	}
	if r.cfg.sessionID != "" {
		if r.rt.sessions == nil {
			r.fail(noSessionStore(r.cfg.sessionID), "")
			return false
		}
		hist, err := r.rt.sessions.LoadSession(r.ctx, r.cfg.sessionID)
		if err != nil {
			r.fail(fmt.Errorf("runlet: loading session %q: %w", r.cfg.sessionID, err), "")
			return false
		}
		r.sessionLen = len(hist)
		r.history = append(hist, r.cfg.history...)
	} else {
		r.history = r.cfg.history
	}
	if r.input != "" {
		r.added = append(r.added, UserText(r.input))
	}
	r.added = append(r.added, r.cfg.input...)
	if r.watched {
		r.emit(&RunStarted{SessionID: r.cfg.sessionID, Input: slices.Clone(r.added)})
	}
	return true
}

// think is one model call: Thinking state, request, preparers, hooks, model.
func (r *run) think() (*ModelResponse, bool) {
	if r.info.Turn >= r.maxTurns {
		r.fail(fmt.Errorf("%w (%d)", ErrMaxTurns, r.maxTurns), "max_turns")
		return nil, false
	}
	if !r.requestAllowed() {
		return nil, false
	}
	r.transition(StateThinking)
	r.info.Turn++
	if !r.toolsLoaded && len(r.agent.Toolsets) > 0 {
		if err := r.loadTools(); err != nil {
			r.fail(err, "")
			return nil, false
		}
	}
	r.toolsLoaded = false

	req := r.buildRequest()
	if !r.prepare(req) {
		return nil, false
	}
	for _, h := range r.hooks {
		if h.BeforeModelCall != nil {
			if err := h.BeforeModelCall(r.ctx, req); err != nil {
				r.fail(err, "hook:BeforeModelCall")
				return nil, false
			}
		}
	}
	if !r.requestAllowed() { // the preparers' own calls count too
		return nil, false
	}
	if r.watched {
		r.emit(&ModelStarted{Purpose: PurposeAgent, Request: req})
	}
	start := time.Now()
	resp, err := r.callModel(req)
	if err != nil {
		r.fail(err, "")
		return nil, false
	}
	for _, h := range r.hooks {
		if h.AfterModelCall != nil {
			if err := h.AfterModelCall(r.ctx, req, resp); err != nil {
				r.fail(err, "hook:AfterModelCall")
				return nil, false
			}
		}
	}
	r.nameCalls(resp)
	u := r.account(PurposeAgent, resp.Usage)
	r.info.prevInputTokens = u.InputTokens
	r.added = append(r.added, resp.Message)
	if r.watched {
		r.emit(&ModelFinished{Purpose: PurposeAgent, Response: resp, Duration: time.Since(start)})
	}
	if policy, err := r.checkTokens(); err != nil {
		r.fail(err, policy)
		return nil, false
	}
	return resp, true
}

// requestAllowed fails the run if its request limit is used up.
func (r *run) requestAllowed() bool {
	if r.limits.Requests > 0 && r.usage.Requests >= r.limits.Requests {
		r.fail(fmt.Errorf("%w: %d model requests", ErrUsageLimit, r.limits.Requests), "usage_limit:requests")
		return false
	}
	return true
}

// nameCalls gives tool calls without an ID (some servers send none) one that
// is unique in the run, so each result can name its call.
func (r *run) nameCalls(resp *ModelResponse) {
	cloned := false
	for i, p := range resp.Message.Parts {
		if c, ok := p.(ToolCallPart); ok && c.ID == "" {
			if !cloned { // the parts may be shared with the model
				resp.Message.Parts, cloned = slices.Clone(resp.Message.Parts), true
			}
			c.ID = fmt.Sprintf("call_t%d_%d", r.info.Turn, i)
			resp.Message.Parts[i] = c
		}
	}
}

func (r *run) buildRequest() *ModelRequest {
	a := r.agent
	msgs := make([]Message, 0, len(r.history)+len(r.added))
	msgs = append(append(msgs, r.history...), r.added...)
	req := &ModelRequest{
		Instructions: a.Instructions,
		Messages:     msgs,
		Tools:        r.specs,
		ToolChoice:   a.ToolChoice,
		OutputSchema: a.OutputSchema,
		Settings:     r.settings,
		Options:      r.options,
	}
	if r.out != nil {
		r.out.shapeRequest(req)
	}
	return req
}

func (r *run) prepare(req *ModelRequest) bool {
	before := len(req.Messages)
	if len(r.preparers) == 0 {
		r.info.prevMessages, r.info.prevKeptFrom = before, 0
		return true
	}
	notes := &prepNotes{}
	r.info.notes, r.info.run = notes, r
	defer func() { r.info.notes, r.info.run = nil, nil }()
	for _, p := range r.preparers {
		if err := p.Prepare(r.ctx, req); err != nil {
			policy := ""
			switch {
			case errors.Is(err, ErrContextOverflow):
				policy = "context_overflow"
			case errors.Is(err, ErrUsageLimit) && r.limitHit != "":
				policy = r.limitHit
			}
			r.fail(err, policy)
			return false
		}
	}
	// Preparers only drop from the front or replace a prefix; remember where
	// the kept window starts, for the next call's token anchor.
	after := len(req.Messages)
	r.info.prevMessages, r.info.prevKeptFrom = before, max(before-after, 0)
	if r.watched {
		r.emit(&ContextPrepared{
			Changed:         len(notes.notes) > 0 || before != after,
			MessagesBefore:  before,
			MessagesAfter:   after,
			EstimatedTokens: notes.tokens,
			Notes:           notes.notes,
		})
	}
	return true
}

// callModel calls Generate for Run and Stream for Stream, forwarding deltas.
func (r *run) callModel(req *ModelRequest) (*ModelResponse, error) {
	m := r.agent.Model
	if r.yield == nil {
		resp, err := m.Generate(r.ctx, req)
		if err == nil && resp == nil {
			err = &ProviderError{Message: "model returned no response and no error"}
		}
		return resp, err
	}
	var resp *ModelResponse
	for ev, err := range m.Stream(r.ctx, req) {
		if err != nil {
			return nil, err
		}
		switch ev.Kind {
		case StreamTextDelta:
			r.emit(&TextDelta{Delta: ev.Delta})
		case StreamReasoningDelta:
			r.emit(&ReasoningDelta{Delta: ev.Delta})
		case StreamToolCallDelta:
			r.emit(&ToolCallDelta{Index: ev.Index, ID: ev.ID, Name: ev.Name, Delta: ev.Delta})
		case StreamDone:
			resp = ev.Response
		}
		if r.out != nil && r.watched {
			r.outputDelta(ev)
		}
		if r.stopped {
			break // closes the model stream
		}
	}
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, &ProviderError{Message: "model stream ended without a final response", Err: ErrStreamIncomplete}
	}
	return resp, nil
}

func (r *run) checkTokens() (string, error) {
	l, u := r.limits, r.usage
	check := func(name string, limit, used int) (string, error) {
		if limit > 0 && used > limit {
			return "usage_limit:" + name, fmt.Errorf("%w: %s %d > %d", ErrUsageLimit, strings.ReplaceAll(name, "_", " "), used, limit)
		}
		return "", nil
	}
	if p, err := check("input_tokens", l.InputTokens, u.InputTokens); err != nil {
		return p, err
	}
	if p, err := check("output_tokens", l.OutputTokens, u.OutputTokens); err != nil {
		return p, err
	}
	return check("total_tokens", l.TotalTokens, u.TotalTokens)
}

// act runs the tool calls of the last assistant message (Acting), appends
// their results (Observing) and commits the turn. results holds results
// already known for some calls (on resume).
func (r *run) act(calls []ToolCallPart, known []ToolResultPart) bool {
	if r.limits.ToolCalls > 0 && r.toolCalls+len(calls) > r.limits.ToolCalls {
		r.fail(fmt.Errorf("%w: %d tool calls", ErrUsageLimit, r.limits.ToolCalls), "usage_limit:tool_calls")
		return false
	}
	r.transition(StateActing)
	results, pending, ok := r.runTools(calls, known)
	if !ok {
		return false
	}
	if len(pending) > 0 {
		r.interrupt(calls, results, pending)
		return false
	}
	r.toolCalls += len(calls)
	parts := make([]Part, len(results))
	for i, res := range results {
		parts[i] = res
	}
	r.added = append(r.added, Message{Role: RoleTool, Parts: parts})
	r.transition(StateObserving)
	return r.commit()
}

// commit appends this run's not yet stored messages to the session. It is
// called only at turn boundaries, so the store never holds a half turn.
func (r *run) commit() bool {
	if r.cfg.sessionID == "" || r.committed == len(r.added) {
		return true
	}
	// Store writes finish even if the run is being cancelled, so a completed
	// turn is not lost.
	ctx := context.WithoutCancel(r.ctx)
	if err := r.rt.sessions.AppendSession(ctx, r.cfg.sessionID, r.sessionLen+r.committed, r.added[r.committed:]); err != nil {
		r.fail(fmt.Errorf("runlet: saving session %q: %w", r.cfg.sessionID, err), "")
		return false
	}
	r.committed = len(r.added)
	return true
}

func (r *run) finish(resp *ModelResponse) {
	if !r.commit() {
		return
	}
	res := r.snapshot(StatusCompleted)
	res.Output = resp.Message.Text()
	res.Reasoning = resp.Message.Reasoning()
	r.result = res
	r.transition(StateFinished)
	r.emit(&RunFinished{Result: res})
}

// snapshot returns the Result as of now.
func (r *run) snapshot(status Status) *Result {
	return &Result{
		RunID:          r.cfg.runID,
		SessionID:      r.cfg.sessionID,
		Status:         status,
		Messages:       slices.Clone(r.added),
		Usage:          r.usage,
		UsageByPurpose: maps.Clone(r.byPurpose),
		Turns:          r.info.Turn,
	}
}

// fail ends the run with err. policy names the policy that stopped it, if any.
func (r *run) fail(err error, policy string) {
	if ce := r.ctx.Err(); ce != nil && !errors.Is(err, ce) && policy == "" {
		err = fmt.Errorf("%w: %w", ce, err)
	}
	if policy != "" {
		err = &PolicyError{Policy: policy, Err: err}
	}
	r.err = err
	if r.info != nil {
		r.result = r.snapshot(StatusFailed)
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

// interrupt checkpoints the run and ends it as interrupted.
func (r *run) interrupt(calls []ToolCallPart, results []ToolResultPart, pending []int) {
	limits := r.limits
	cp := &Checkpoint{
		RunID:          r.cfg.runID,
		SessionID:      r.cfg.sessionID,
		Agent:          r.agent.Name,
		Turn:           r.info.Turn,
		HistoryLen:     r.sessionLen,
		Committed:      r.committed,
		Messages:       slices.Clone(r.added),
		Usage:          r.usage,
		UsageByPurpose: maps.Clone(r.byPurpose),
		ToolCalls:      r.toolCalls,
		Settings:       r.cfg.settings,
		Options:        r.cfg.options,
		Limits:         &limits,
		MaxTurns:       r.maxTurns,
		CreatedAt:      time.Now().UTC(),
	}
	if r.cfg.sessionID == "" {
		cp.History = r.history
	}
	isPending := make(map[int]bool, len(pending))
	for _, i := range pending {
		isPending[i] = true
		cp.Pending = append(cp.Pending, calls[i])
	}
	for i, res := range results {
		if !isPending[i] {
			cp.Results = append(cp.Results, res)
		}
	}
	if err := r.rt.checkpoints.SaveCheckpoint(context.WithoutCancel(r.ctx), cp); err != nil {
		r.fail(fmt.Errorf("runlet: saving checkpoint: %w", err), "")
		return
	}
	res := r.snapshot(StatusInterrupted)
	res.Pending = cp.Pending
	r.result = res
	r.transition(StateInterrupted)
	r.emit(&RunInterrupted{Pending: cp.Pending, Result: res})
}

// startResume claims the checkpoint and validates the decisions. It returns
// the interrupted turn's calls and the results known so far.
func (r *run) startResume() ([]ToolCallPart, []ToolResultPart, bool) {
	store := r.rt.checkpoints
	cp, err := store.LoadCheckpoint(r.ctx, r.cfg.runID)
	if err != nil {
		r.fail(fmt.Errorf("runlet: resuming run %q: %w", r.cfg.runID, err), "")
		return nil, nil, false
	}
	if cp.SessionID != "" && r.rt.sessions == nil {
		r.fail(fmt.Errorf("runlet: resuming run %q: %w", r.cfg.runID, noSessionStore(cp.SessionID)), "")
		return nil, nil, false
	}
	if err := checkDecisions(cp.Pending, r.decided); err != nil {
		r.fail(fmt.Errorf("runlet: resuming run %q: %w", r.cfg.runID, err), "")
		return nil, nil, false
	}
	// The resumed run is the same run: its own settings, options and
	// limits, and the counts so far (see Checkpoint for older checkpoints).
	r.cfg.options, r.cfg.settings, r.cfg.limits = cp.Options, cp.Settings, cp.Limits
	if err := r.setup(); err != nil {
		r.fail(fmt.Errorf("runlet: resuming run %q: %w", r.cfg.runID, err), "")
		return nil, nil, false
	}
	// Claim atomically: of several concurrent resumes exactly one proceeds.
	if cp, err = store.ClaimCheckpoint(r.ctx, r.cfg.runID); err != nil {
		r.fail(fmt.Errorf("runlet: resuming run %q: %w", r.cfg.runID, err), "")
		return nil, nil, false
	}
	r.cfg.sessionID = cp.SessionID
	r.info.SessionID = cp.SessionID
	r.info.Turn = cp.Turn
	r.result.SessionID = cp.SessionID
	r.history = cp.History
	r.sessionLen = cp.HistoryLen
	if cp.SessionID != "" {
		hist, err := r.rt.sessions.LoadSession(r.ctx, cp.SessionID)
		if err != nil {
			r.fail(fmt.Errorf("runlet: loading session %q: %w", cp.SessionID, err), "")
			return nil, nil, false
		}
		if len(hist) != cp.HistoryLen+cp.Committed {
			r.fail(fmt.Errorf("runlet: session %q changed while run %q was interrupted: %w", cp.SessionID, cp.RunID, ErrConflict), "")
			return nil, nil, false
		}
		r.history = hist[:cp.HistoryLen]
		r.committed = cp.Committed
	}
	r.added = cp.Messages
	r.usage, r.byPurpose = cp.Usage, cp.UsageByPurpose
	if r.byPurpose == nil && cp.Usage.Requests > 0 { // a checkpoint from before purposes
		r.byPurpose = map[string]Usage{PurposeAgent: cp.Usage}
	}
	r.toolCalls = cp.ToolCalls
	if cp.MaxTurns > 0 {
		r.maxTurns = cp.MaxTurns
	}
	r.emit(&RunResumed{SessionID: cp.SessionID, Decisions: r.decided})

	last := cp.Messages[len(cp.Messages)-1]
	calls := last.ToolCalls()
	byID := make(map[string]Decision, len(r.decided))
	for _, d := range r.decided {
		byID[d.CallID] = d
	}
	known := make([]ToolResultPart, len(calls)) // zero CallID: not known yet
	r.approved, r.rejected = make(map[string]bool), make(map[string]bool)
	for i, c := range calls {
		for _, res := range cp.Results {
			if res.CallID == c.ID {
				known[i] = res
			}
		}
		if d, ok := byID[c.ID]; ok {
			if !d.Approve {
				reason := d.Reason
				if reason == "" {
					reason = "rejected by a human"
				}
				known[i] = ToolResultPart{CallID: c.ID, Name: c.Name, Content: "Error: call rejected: " + reason, IsError: true}
				r.rejected[c.ID] = true
			} else {
				if len(d.Arguments) > 0 {
					calls[i].Arguments = d.Arguments
				}
				r.approved[c.ID] = true
			}
		}
	}
	return calls, known, true
}

func noSessionStore(id string) error {
	return fmt.Errorf("runlet: session %q needs a session store and this Runtime has none; "+
		"create it with runlet.NewRuntime(runlet.WithStore(runlet.NewMemoryStore())) to keep sessions in this process, "+
		"or with a durable store (store/sqlite, store/postgres): %w", id, ErrNoSession)
}

func checkDecisions(pending []ToolCallPart, decisions []Decision) error {
	want := make(map[string]bool, len(pending))
	for _, c := range pending {
		want[c.ID] = true
	}
	seen := make(map[string]bool, len(decisions))
	for _, d := range decisions {
		if !want[d.CallID] {
			return fmt.Errorf("decision for unknown call %q", d.CallID)
		}
		if seen[d.CallID] {
			return fmt.Errorf("two decisions for call %q", d.CallID)
		}
		if d.Approve && len(d.Arguments) > 0 && !json.Valid(d.Arguments) {
			return fmt.Errorf("edited arguments for call %q are not valid JSON", d.CallID)
		}
		seen[d.CallID] = true
	}
	for _, c := range pending {
		if !seen[c.ID] {
			return fmt.Errorf("no decision for pending call %q (%s)", c.ID, c.Name)
		}
	}
	return nil
}
