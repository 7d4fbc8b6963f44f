package runlet

import (
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"time"
)

// toolOutcome is one finished call, sent from a worker to the run goroutine.
type toolOutcome struct {
	i       int
	content string
	// a tool's output beyond text (see ToolResultPart)
	parts      []Part
	structured json.RawMessage
	kind       ToolErrorKind
	dur        time.Duration
	paused     *Checkpoint // a nested agent's interruption
	trip       error       // a guardrail's tripwire (see guardedCall)
}

// outcomeResult is the result an outcome gives its call. A failed call's
// result is its error message only: the parts of an output a guardrail
// rejected must not reach the model with the rejection.
func outcomeResult(c ToolCallPart, o toolOutcome) ToolResultPart {
	if o.kind != "" {
		return ToolResultPart{CallID: c.ID, Name: c.Name, Content: o.content, IsError: true}
	}
	return ToolResultPart{CallID: c.ID, Name: c.Name, Content: o.content, Parts: o.parts, Structured: o.structured}
}

// runTools decides and runs one turn's calls. BeforeToolCall hooks and
// approval checks run first, in the model's order, on the run goroutine; the
// calls that remain run concurrently (bounded). Results come back in the
// model's order; pending lists the calls waiting for a human. known holds
// results already decided (on resume; zero CallID means none).
func (r *run) runTools(calls []ToolCallPart, known []ToolResultPart) (results []ToolResultPart, pending []int, err error) {
	results = r.turnResults(len(calls))
	kinds := make([]ToolErrorKind, len(calls))
	r.pausedCalls = nil
	runnable, invokes := r.turnRunnable[:0], r.turnInvokes[:0]
	for i := range calls {
		c := &calls[i]
		if known != nil && known[i].CallID != "" {
			results[i] = known[i]
			if ht, ok := r.toolOf(c.Name).(*handoffTool); ok && !results[i].IsError && r.next == nil {
				r.next = ht.h // a handoff decided before the interruption
			}
			if r.rejected[c.ID] && r.watched {
				r.emit(&ToolStarted{Call: *c})
				r.emit(&ToolFinished{Call: *c, Result: results[i], ErrorKind: ToolDenied})
			}
			continue
		}
		res, kind, verdict, err := r.beforeTool(c)
		if err != nil {
			return nil, nil, &PolicyError{Policy: "hook:BeforeToolCall", Err: err}
		}
		switch verdict {
		case verdictPending:
			pending = append(pending, i)
		case verdictDone:
			results[i], kinds[i] = res, kind
			if err := r.settled(*c, &results[i], kind); err != nil {
				return nil, nil, err
			}
		default:
			if ht, ok := r.toolOf(c.Name).(*handoffTool); ok {
				results[i], kinds[i] = r.handoffResult(*c, ht)
				if r.watched {
					r.emit(&ToolStarted{Call: *c})
				}
				if err := r.afterTool(*c, &results[i]); err != nil {
					return nil, nil, err
				}
				if r.watched {
					r.emit(&ToolFinished{Call: *c, Result: results[i], ErrorKind: kinds[i]})
				}
				continue
			}
			inv, content, kind := r.check(*c)
			if kind != "" {
				results[i] = errorResult(*c, content)
				if err := r.settled(*c, &results[i], kind); err != nil {
					return nil, nil, err
				}
				continue
			}
			runnable = append(runnable, i)
			invokes = append(invokes, inv)
		}
	}
	if len(runnable) > 0 {
		if err := r.execute(calls, runnable, invokes, results); err != nil {
			return nil, nil, err
		}
	}
	if len(r.pausedCalls) > 0 {
		for _, i := range runnable {
			if r.pausedCalls[calls[i].ID] != nil {
				pending = append(pending, i)
			}
		}
		slices.Sort(pending)
	}
	return results, pending, nil
}

// turnCalls is how many calls of a turn the run's own buffers hold; a
// turn with more allocates its own.
const turnCalls = 2

// turnResults returns a zeroed slice for a turn's n results. Each turn's
// results are copied out (into the tool message, or the checkpoint) before
// the next turn, so the run reuses its own small buffer.
func (r *run) turnResults(n int) []ToolResultPart {
	if n > len(r.turnResultBuf) {
		return make([]ToolResultPart, n)
	}
	res := r.turnResultBuf[:n:n]
	clear(res)
	return res
}

// settled reports a call whose result is known without running it (a hook
// answered, or the call failed its checks): ToolStarted, the AfterToolCall
// hooks, ToolFinished. It returns why the run fails, if a hook failed it.
func (r *run) settled(c ToolCallPart, res *ToolResultPart, kind ToolErrorKind) error {
	if r.watched {
		r.emit(&ToolStarted{Call: c})
	}
	if err := r.afterTool(c, res); err != nil {
		return err
	}
	if r.watched {
		r.emit(&ToolFinished{Call: c, Result: *res, ErrorKind: kind})
	}
	return nil
}

type verdict int

const (
	verdictRun verdict = iota
	verdictDone
	verdictPending
)

// beforeTool applies approval policy and BeforeToolCall hooks to one call.
func (r *run) beforeTool(c *ToolCallPart) (ToolResultPart, ToolErrorKind, verdict, error) {
	for _, h := range r.hooks {
		if h.BeforeToolCall == nil {
			continue
		}
		res, err := h.BeforeToolCall(r.ctx, c)
		var deny *denyError
		switch {
		case errors.As(err, &deny):
			return errorResult(*c, "Error: call denied: "+deny.reason), ToolDenied, verdictDone, nil
		case errors.Is(err, ErrApprovalRequired):
			if r.approved[c.ID] {
				continue
			}
			return ToolResultPart{}, "", verdictPending, nil
		case err != nil:
			return ToolResultPart{}, "", verdictRun, err
		case res != nil:
			out := *res
			out.CallID, out.Name = c.ID, c.Name
			return out, "", verdictDone, nil
		}
	}
	if t, ok := r.tool(c.Name); ok && PolicyOf(t).RequiresApproval && !r.approved[c.ID] {
		return ToolResultPart{}, "", verdictPending, nil
	}
	return ToolResultPart{}, "", verdictRun, nil
}

// afterTool runs the AfterToolCall hooks on a call's result. It returns
// the *PolicyError that fails the run if one of them fails.
func (r *run) afterTool(c ToolCallPart, res *ToolResultPart) error {
	content := res.Content
	for _, h := range r.hooks {
		if h.AfterToolCall != nil {
			if err := h.AfterToolCall(r.ctx, c, res); err != nil {
				return &PolicyError{Policy: "hook:AfterToolCall", Err: err}
			}
		}
	}
	if res.Content != content {
		res.Parts = withText(res.Parts, res.Content)
	}
	return nil
}

// execute runs the given calls, at most toolConcurrency at once, and emits
// tool.finished as each completes. Workers return
// promptly once the run is cancelled (see callTool), so waiting for all of
// them is bounded and no worker outlives the run.
func (r *run) execute(calls []ToolCallPart, idx []int, invokes []invocation, results []ToolResultPart) error {
	for _, i := range idx {
		if r.watched {
			r.emit(&ToolStarted{Call: calls[i]})
		}
	}
	if len(idx) == 1 {
		// One call needs no worker: the run goroutine waits for it as it
		// would for the worker (callTool still runs the tool on its own
		// goroutine, to abandon one that ignores its context).
		i := idx[0]
		var o toolOutcome
		switch {
		case r.ctx.Err() != nil:
			o = toolOutcome{i: i, content: canceledBeforeRun, kind: ToolCanceled}
		case r.tooManyAbandoned():
			o = toolOutcome{i: i, content: tooManyAbandoned, kind: ToolFailed}
		default:
			o = r.guardedCall(calls[i], i, &invokes[0], true)
		}
		var hookFailed bool
		r.collect(calls, o, results, &hookFailed)
		return r.executed(hookFailed)
	}
	// A pool of at most toolConcurrency workers takes the calls in the
	// model's order: a turn of thousands of calls starts as many goroutines
	// as a turn of a few (each worker's call runs on one more, see
	// callTool), not one per call waiting for its turn.
	p := &toolPool{r: r, calls: calls, idx: idx, invokes: invokes, done: make(chan toolOutcome, len(idx))}
	for range min(r.rt.toolConcurrency, len(idx)) {
		go p.work()
	}
	var hookFailed bool
	for range idx {
		r.collect(calls, <-p.done, results, &hookFailed)
	}
	return r.executed(hookFailed)
}

// toolPool hands one turn's calls to its workers, in the model's order.
type toolPool struct {
	r       *run
	calls   []ToolCallPart
	idx     []int
	invokes []invocation
	done    chan toolOutcome // buffered for every call: a late worker never blocks
	next    atomic.Int64     // the next position in idx to take
}

// work runs calls until none is left; once the run is cancelled, it
// reports the calls it takes as cancelled without running them.
func (p *toolPool) work() {
	for {
		k := int(p.next.Add(1) - 1)
		if k >= len(p.idx) {
			return
		}
		i := p.idx[k]
		switch {
		case p.r.ctx.Err() != nil:
			p.done <- toolOutcome{i: i, content: canceledBeforeRun, kind: ToolCanceled}
		case p.r.tooManyAbandoned():
			p.done <- toolOutcome{i: i, content: tooManyAbandoned, kind: ToolFailed}
		default:
			p.done <- p.r.guardedCall(p.calls[i], i, &p.invokes[k], false)
		}
	}
}

const canceledBeforeRun = "Error: the run was cancelled before the tool ran."

const tooManyAbandoned = "Error: not run: earlier calls of this run still run after their timeout. Call fewer tools, or try again later."

// tooManyAbandoned reports whether as many tools of this run as
// WithToolConcurrency were abandoned after their timeout and still run: a
// tool that ignores its context would otherwise keep one goroutine for
// each call a model asks for.
func (r *run) tooManyAbandoned() bool {
	return int(r.abandoned.Load()) >= r.rt.toolConcurrency
}

// collect takes one finished call's outcome: its result, the AfterToolCall
// hooks, tool.finished. After a hook failed (*hookFailed) or the run was
// cancelled it only keeps the result, so that every worker is waited for.
// A failing hook fails the run here and at once, not once the other calls
// are done: the one exception to steps returning why the run fails.
func (r *run) collect(calls []ToolCallPart, o toolOutcome, results []ToolResultPart, hookFailed *bool) {
	c := calls[o.i]
	if o.trip != nil { // ends the turn once every call returned
		if r.tripped == nil {
			r.tripped = o.trip
			r.cancel()
		}
		return
	}
	if o.paused != nil {
		if r.pausedCalls == nil {
			r.pausedCalls = make(map[string]*Checkpoint)
		}
		r.pausedCalls[c.ID] = o.paused
		return
	}
	results[o.i] = outcomeResult(c, o)
	if *hookFailed || r.ctx.Err() != nil {
		return
	}
	if err := r.afterTool(c, &results[o.i]); err != nil {
		r.fail(err)
		*hookFailed = true // keep collecting so no worker outlives the run
		return
	}
	if r.watched {
		r.emit(&ToolFinished{Call: c, Result: results[o.i], ErrorKind: o.kind, Duration: o.dur})
	}
}

// executed ends execute: errEnded if a hook failed the run, a guardrail's
// tripwire, the context's error if it was cancelled.
func (r *run) executed(hookFailed bool) error {
	if hookFailed {
		return errEnded
	}
	if err := r.tripped; err != nil {
		r.tripped = nil
		return err
	}
	if err := r.ctx.Err(); err != nil {
		return err
	}
	return nil
}
