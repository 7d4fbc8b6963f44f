package runlet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Thinking: one model call of the run, from building the request through
// preparers and hooks to the accounted response.

// think is one model call: Thinking state, request, preparers, hooks, model.
func (r *run) think() (*ModelResponse, error) {
	if r.info.Turn >= r.maxTurns {
		return nil, &PolicyError{Policy: "max_turns", Err: fmt.Errorf("%w (%d)", ErrMaxTurns, r.maxTurns)}
	}
	if err := r.requestAllowed(); err != nil {
		return nil, err
	}
	r.release() // a previous answer, retried
	r.transition(StateThinking)
	r.info.mu.Lock()
	r.info.Turn++
	r.info.mu.Unlock()
	if !r.toolsLoaded && len(r.agent.Toolsets) > 0 {
		if err := r.loadTools(); err != nil {
			return nil, err
		}
	}
	r.toolsLoaded = false

	req := r.buildRequest()
	if err := r.prepare(req); err != nil {
		return nil, err
	}
	for _, h := range r.hooks {
		if h.BeforeModelCall != nil {
			if err := h.BeforeModelCall(r.ctx, req); err != nil {
				return nil, &PolicyError{Policy: "hook:BeforeModelCall", Err: err}
			}
		}
	}
	if err := r.requestAllowed(); err != nil { // the preparers' own calls count too
		return nil, err
	}
	ctx, checks, err := r.guardInput()
	if err != nil {
		return nil, err
	}
	if r.watched {
		r.emit(&ModelStarted{Purpose: PurposeAgent, Request: req})
	}
	start := time.Now()
	resp, err := r.callModel(ctx, req)
	if checks != nil {
		err = r.inputChecked(checks, resp, err)
	}
	if err != nil {
		return nil, err
	}
	for _, h := range r.hooks {
		if h.AfterModelCall != nil {
			if err := h.AfterModelCall(r.ctx, req, resp); err != nil {
				return nil, &PolicyError{Policy: "hook:AfterModelCall", Err: err}
			}
		}
	}
	r.nameCalls(resp)
	u, cost := r.account(PurposeAgent, resp)
	r.info.mu.Lock()
	r.info.prevInputTokens = u.InputTokens
	r.info.mu.Unlock()
	r.added = append(r.added, resp.Message)
	if r.watched {
		r.emit(&ModelFinished{Purpose: PurposeAgent, Response: resp, Cost: cost, Duration: time.Since(start)})
		for _, p := range resp.Message.Parts {
			if h, ok := p.(HostedToolPart); ok {
				r.emit(&HostedToolFinished{Part: h.clone()})
			}
		}
	}
	if err := r.tokensLeft(); err != nil {
		return nil, err
	}
	return resp, nil
}

// requestAllowed returns the *PolicyError that fails the run if its
// request limit is used up.
func (r *run) requestAllowed() error {
	if r.limits.Requests > 0 && r.ledger.total().Requests >= r.limits.Requests {
		return &PolicyError{Policy: "usage_limit:requests", Err: fmt.Errorf("%w: %d model requests", ErrUsageLimit, r.limits.Requests)}
	}
	return nil
}

// nameCalls gives tool calls without an ID (some servers send none), or
// with the ID of an earlier call of the same message, one that is unique
// in the run, so each result (and each decision on resume) names one call.
func (r *run) nameCalls(resp *ModelResponse) {
	nameCalls(resp, r.info.Turn)
}

func nameCalls(resp *ModelResponse, turn int) {
	parts := resp.Message.Parts
	var seen map[string]bool // for a message of many calls; else a scan
	if len(parts) > 16 {
		seen = make(map[string]bool, len(parts))
	}
	cloned := false
	for i, p := range parts {
		c, ok := p.(ToolCallPart)
		if !ok {
			continue
		}
		if c.ID == "" || idUsed(parts[:i], seen, c.ID) {
			if !cloned { // the parts may be shared with the model
				parts, cloned = slices.Clone(parts), true
				resp.Message.Parts = parts
			}
			c.ID = fmt.Sprintf("call_t%d_%d", turn, i)
			for idUsed(parts[:i], seen, c.ID) {
				c.ID += "_"
			}
			parts[i] = c
		}
		if seen != nil {
			seen[c.ID] = true
		}
	}
}

// idUsed reports whether a call in before has the ID id: from seen when
// the caller keeps it, else by a scan.
func idUsed(before []Part, seen map[string]bool, id string) bool {
	if seen != nil {
		return seen[id]
	}
	for _, p := range before {
		if c, ok := p.(ToolCallPart); ok && c.ID == id {
			return true
		}
	}
	return false
}

func (r *run) buildRequest() *ModelRequest {
	a := r.agent
	req := r.newRequest()
	*req = ModelRequest{
		Instructions: a.Instructions,
		Messages:     req.Messages,
		Tools:        r.specs,
		HostedTools:  a.HostedTools,
		ToolChoice:   r.toolChoice(),
		OutputSchema: a.OutputSchema,
		Settings:     r.settings,
		Options:      r.options,
	}
	if r.out != nil {
		r.out.shapeRequest(req)
	}
	return req
}

// toolChoice is the agent's ToolChoice for the next request: a forced
// choice gives way to auto once the agent has called a tool in the run,
// unless the agent keeps it (see Agent.KeepToolChoice).
func (r *run) toolChoice() ToolChoice {
	tc := r.agent.ToolChoice
	if r.calledTools && !r.agent.KeepToolChoice && (tc.Mode == ToolChoiceRequired || tc.Mode == ToolChoiceTool) {
		return ToolChoice{Mode: ToolChoiceAuto}
	}
	return tc
}

// A request and room for its messages, in one allocation (and one size
// class: 320 and 480 bytes), for the short conversations most runs have.
type (
	request4 struct {
		req  ModelRequest
		msgs [4]Message
	}
	request8 struct {
		req  ModelRequest
		msgs [8]Message
	}
)

// newRequest returns a request holding the conversation (Messages, of
// capacity its length), and nothing else.
func (r *run) newRequest() *ModelRequest {
	n := r.conversationLen()
	var req *ModelRequest
	var msgs []Message
	switch {
	case n <= len(request4{}.msgs):
		x := new(request4)
		req, msgs = &x.req, x.msgs[:0:n]
	case n <= len(request8{}.msgs):
		x := new(request8)
		req, msgs = &x.req, x.msgs[:0:n]
	default:
		req, msgs = new(ModelRequest), make([]Message, 0, n)
	}
	req.Messages = r.appendConversation(msgs)
	return req
}

func (r *run) prepare(req *ModelRequest) error {
	before := len(req.Messages)
	if len(r.preparers) == 0 {
		r.info.mu.Lock()
		r.info.prevMessages, r.info.prevKeptFrom = before, 0
		r.info.mu.Unlock()
		return nil
	}
	notes := &prepNotes{}
	r.info.mu.Lock()
	r.info.notes, r.info.run = notes, r
	r.info.mu.Unlock()
	defer func() {
		r.info.mu.Lock()
		r.info.notes, r.info.run = nil, nil
		r.info.mu.Unlock()
	}()
	for _, p := range r.preparers {
		if err := p.Prepare(r.ctx, req); err != nil {
			policy := ""
			switch {
			case errors.Is(err, ErrContextOverflow):
				policy = "context_overflow"
			case errors.Is(err, ErrUsageLimit) && r.limitHit != "":
				policy = r.limitHit
			}
			if policy != "" {
				return &PolicyError{Policy: policy, Err: err}
			}
			return err
		}
	}
	// Preparers only drop from the front or replace a prefix; remember where
	// the kept window starts, for the next call's token anchor.
	after := len(req.Messages)
	r.info.mu.Lock()
	r.info.prevMessages, r.info.prevKeptFrom = before, max(before-after, 0)
	r.info.mu.Unlock()
	if r.watched {
		r.emit(&ContextPrepared{
			Changed:         len(notes.notes) > 0 || before != after,
			MessagesBefore:  before,
			MessagesAfter:   after,
			EstimatedTokens: notes.tokens,
			Notes:           notes.notes,
		})
	}
	return nil
}

// callModel calls Generate for Run and Stream for Stream, forwarding deltas.
// ctx is the run's, or one that input guardrails cancel (see guardInput).
func (r *run) callModel(ctx context.Context, req *ModelRequest) (*ModelResponse, error) {
	m := r.agent.Model
	if r.sink.yield == nil {
		resp, err := m.Generate(ctx, req)
		if err == nil && resp == nil {
			err = &ProviderError{Message: "model returned no response and no error"}
		}
		return resp, err
	}
	return r.streamModel(ctx, m, req)
}

// streamModel is callModel for Stream. The loop body breaks rather than
// returns: a return inside a range-over-func body costs heap allocations.
func (r *run) streamModel(ctx context.Context, m Model, req *ModelRequest) (*ModelResponse, error) {
	var out struct { // one variable: the loop body's captures are allocated
		resp *ModelResponse
		err  error
	}
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			out.err = err
			break
		}
		switch ev.Kind {
		case StreamTextDelta:
			r.emitAnswer(&TextDelta{Delta: ev.Delta})
		case StreamReasoningDelta:
			r.emit(&ReasoningDelta{Delta: ev.Delta})
		case StreamToolCallDelta:
			r.emit(&ToolCallDelta{Index: ev.Index, ID: ev.ID, Name: ev.Name, Delta: ev.Delta})
		case StreamDone:
			out.resp = ev.Response
		}
		if r.out != nil && r.watched {
			r.outputDelta(ev)
		}
		if r.sink.stopped.Load() {
			break // closes the model stream
		}
	}
	if out.err != nil {
		return nil, out.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if out.resp == nil {
		return nil, &ProviderError{Message: "model stream ended without a final response", Err: ErrStreamIncomplete}
	}
	return out.resp, nil
}

// tokensLeft returns the *PolicyError that fails the run if it has spent
// more tokens than its limits allow.
func (r *run) tokensLeft() error {
	if policy, err := r.checkTokens(); err != nil {
		return &PolicyError{Policy: policy, Err: err}
	}
	return nil
}

func (r *run) checkTokens() (string, error) {
	l, u := r.limits, r.ledger.total()
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
