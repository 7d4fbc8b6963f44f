package runlet

// Checking and calling one tool call: the checks a call passes on the run
// goroutine before any worker starts, and the call itself with its
// timeout, grace period, recovered panic and output cap (the executor
// every run and Runtime.CallTool share).

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// invocation is a checked call, ready to run on a worker: the tool, its
// arguments, and for an agent called as a tool what the nested run needs.
type invocation struct {
	tool      Tool
	args      json.RawMessage
	timeout   time.Duration
	maxOutput int
	// maxMedia, when set, bounds a result's images, files and audio apart
	// from maxOutput (which then bounds its text); else maxOutput bounds
	// them all together
	maxMedia int
	// a typed tool's arguments as check decoded them (see predecode)
	in any
	// an agent tool's nested run
	hist    []Message
	from    *Checkpoint
	decided []Decision
}

// call runs the checked call (a method, not a closure: no allocation).
func (inv invocation) call(ctx context.Context, r *run, callID string) (toolRet, error) {
	switch t := inv.tool.(type) {
	case *agentTool:
		return t.runNested(ctx, r, callID, inv.args, inv.hist, inv.from, inv.decided)
	case *funcTool: // validated by check
		switch in := inv.in.(type) {
		case nil:
			return t.callRet(ctx, inv.args)
		case *decodeFailed:
			return toolRet{}, in.err
		}
		return t.run(ctx, inv.in)
	case PartsTool:
		o, err := t.CallParts(ctx, inv.args)
		return retOf(o), err
	}
	s, err := inv.tool.Call(ctx, inv.args)
	return toolRet{s: s}, err
}

// check resolves and validates a call on the run goroutine, before any
// worker starts: unknown tool, malformed JSON, schema violation. It returns
// the invocation, or an error message for the model and its kind. What a
// message quotes of the model's call is cut at maxQuoted bytes.
func (r *run) check(c ToolCallPart) (invocation, string, ToolErrorKind) {
	t, ok := r.tool(c.Name)
	if !ok {
		names := make([]string, 0, len(r.specs))
		for _, s := range r.specs {
			names = append(names, s.Name)
		}
		slices.Sort(names)
		msg := fmt.Sprintf("Error: unknown tool %q.", truncate(c.Name, maxQuoted))
		if len(names) > 0 {
			msg += " Available tools: " + strings.Join(names, ", ") + "."
		}
		return invocation{}, msg, ToolUnknown
	}
	args := c.Arguments
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		var v any
		err := json.Unmarshal(args, &v)
		return invocation{}, fmt.Sprintf("Error: the arguments are not valid JSON (%s). Call %s again with a JSON object.", truncate(err.Error(), maxQuoted), c.Name), ToolInvalidJSON
	}
	// The most specific limit wins: the tool's, else the run's or Runtime's.
	pol := PolicyOf(t)
	inv := invocation{tool: t, args: args, timeout: pol.Timeout, maxOutput: cmp.Or(pol.MaxOutput, r.maxToolOutput)}
	if inv.maxOutput == 0 { // no cap set: the defaults, text's and media's
		inv.maxOutput, inv.maxMedia = defaultMaxToolOutput, defaultMaxToolMedia
	}
	if inv.timeout <= 0 {
		inv.timeout = r.toolTimeout
	}
	if at, ok := t.(*agentTool); ok {
		if err := at.in.validate(args); err != nil {
			return invocation{}, invalidArgs(c.Name, err), ToolInvalidArgs
		}
		if at.history {
			inv.hist = r.transcript()
		}
		inv.from, inv.decided = r.nested[c.ID], r.nestedDec[c.ID]
	} else if ft, ok := t.(*funcTool); ok {
		// Validate here, where the stack is already grown: the validator
		// recurses deeply, which is costly on a fresh worker goroutine.
		if err := ft.validateArgs(args, true); err != nil { // json.Valid above
			return invocation{}, invalidArgs(c.Name, err), ToolInvalidArgs
		}
		// Decode here too; a decoding error is still the call's (reported
		// as the tool's, from its goroutine).
		inv.in = ft.predecode(args)
	}
	return inv, "", ""
}

func invalidArgs(tool string, err error) string {
	var te *ToolError
	if errors.As(err, &te) {
		err = te.Err
	}
	return fmt.Sprintf("Error: invalid arguments for %s: %s. Fix the arguments to match the tool's input schema and call it again.", tool, truncate(err.Error(), maxQuoted))
}

// maxQuoted bounds what an error message for the model quotes of its call
// (a validation error quotes the value it rejects, an unknown tool its
// name): a megabyte-long argument is not sent back whole.
const maxQuoted = 1 << 10

// toolWait is where a tool's goroutine leaves its result for callTool.
type toolWait struct {
	done chan struct{} // signalled once ret and err are set
	ret  toolRet
	err  error
	// state goes from waitRunning to waitReturned (the tool's goroutine)
	// or waitAbandoned (callTool), whichever is first
	state atomic.Int32
}

const (
	waitRunning int32 = iota
	waitReturned
	waitAbandoned
)

// callTool runs one checked call (solo: the turn's only one, on the run
// goroutine) and turns every failure into a message the model can act on.
// It returns when the tool returns, or when its timeout or the run's
// cancellation fires (a tool that ignores its context is abandoned after
// toolGrace).
func (r *run) callTool(c ToolCallPart, i int, checked *invocation, solo bool) toolOutcome {
	// A copy: the tool's goroutine may outlive the turn whose buffer
	// checked is in (a tool abandoned after its timeout).
	inv := *checked
	start := time.Now()
	out := toolOutcome{i: i}
	// Every message goes through the output cap, whatever its source: a
	// returned string, a *ToolError's message, a panic value.
	finish := func(content string, kind ToolErrorKind) toolOutcome {
		out.content, out.kind, out.dur = truncate(content, inv.maxOutput), kind, time.Since(start)
		return out
	}
	// A tool's output beyond text goes through the cap too (see capOutput).
	finishOutput := func(o *ToolOutput) toolOutcome {
		res, err := o.resolve()
		if err != nil {
			return finish("Error: "+err.Error(), ToolFailed)
		}
		res, msg := capOutput(res, inv.maxOutput, inv.maxMedia)
		if msg != "" {
			return finish(msg, ToolOutputTooLarge)
		}
		out.content, out.parts, out.structured, out.dur = res.content, res.parts, res.structured, time.Since(start)
		return out
	}
	timeout := inv.timeout
	ctx, cancel := r.ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(r.ctx, timeout)
	}
	defer cancel()

	// The tool's goroutine leaves its result in w and signals w.done. A
	// call running alone uses the run's own w, until a tool is abandoned
	// (it may still write there); otherwise each call has its own.
	w := &r.wait
	if !solo || r.waitLost {
		w = &toolWait{}
	}
	if w.done == nil {
		w.done = make(chan struct{}, 1) // buffered: a late tool never blocks
	}
	w.state.Store(waitRunning)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				r.rt.logger.Error("runlet: tool panicked", "tool", c.Name, "call_id", c.ID, "panic", truncate(fmt.Sprint(v), inv.maxOutput), "stack", string(debug.Stack()))
				w.ret, w.err = toolRet{}, &ToolError{Tool: c.Name, CallID: c.ID, Kind: ToolPanicked, Err: fmt.Errorf("panic: %v", v)}
			}
			if !w.state.CompareAndSwap(waitRunning, waitReturned) {
				r.abandoned.Add(-1) // abandoned, and now returned
			}
			w.done <- struct{}{}
		}()
		w.ret, w.err = inv.call(ctx, r, c.ID)
	}()
	var res toolWait
	select {
	case <-w.done:
		res.ret, res.err = w.ret, w.err
	case <-ctx.Done():
		// Give a cooperative tool its chance to return its own result.
		select {
		case <-w.done:
			res.ret, res.err = w.ret, w.err
		case <-time.After(toolGrace):
			if !w.state.CompareAndSwap(waitRunning, waitAbandoned) {
				<-w.done // it returned meanwhile: its result is set
				res.ret, res.err = w.ret, w.err
				break
			}
			r.abandoned.Add(1)
			res.err = ctx.Err()
			if w == &r.wait {
				r.waitLost = true
			}
		}
	}
	if res.err == nil {
		if res.ret.o != nil {
			return finishOutput(res.ret.o)
		}
		return finish(res.ret.s, "")
	}
	if cp := asPaused(res.err); cp != nil {
		out.paused = cp
		return out
	}
	if _, nested := inv.tool.(*agentTool); nested {
		if trip := guardTrip(res.err); trip != nil { // a tripwire ends the whole run
			out.trip = trip
			return out
		}
	}
	switch {
	case timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && r.ctx.Err() == nil:
		return finish(fmt.Sprintf("Error: the tool timed out after %s.", timeout), ToolTimedOut)
	case r.ctx.Err() != nil:
		return finish("Error: the run was cancelled while the tool ran.", ToolCanceled)
	}
	var te *ToolError
	if errors.As(res.err, &te) {
		switch te.Kind {
		case ToolPanicked:
			return finish(fmt.Sprintf("Error: the tool crashed (%v).", te.Err), ToolPanicked)
		case ToolInvalidArgs, ToolInvalidJSON:
			return finish(invalidArgs(c.Name, te), te.Kind)
		}
		return finish("Error: "+te.Err.Error(), te.Kind)
	}
	return finish("Error: "+res.err.Error(), ToolFailed)
}

func errorResult(c ToolCallPart, msg string) ToolResultPart {
	return ToolResultPart{CallID: c.ID, Name: c.Name, Content: msg, IsError: true}
}

// toolGrace is how long a cancelled or timed-out tool may take to return its
// own result before the run stops waiting for it and abandons it.
const toolGrace = 100 * time.Millisecond
