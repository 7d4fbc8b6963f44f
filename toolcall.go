package runlet

import (
	"context"
	"encoding/json"
	"fmt"
)

// CallTool runs one call of t outside a run, through the executor a run
// uses for its own calls, for a program that serves tools to others (the
// mcp package serves them to MCP clients this way). The arguments are
// checked as a run checks them (valid JSON, the tool's input schema); the
// call is bounded by the tool's timeout, else the Runtime's
// (WithToolTimeout), and a tool that ignores its cancelled context is
// abandoned 100 ms later; a panic is recovered and logged; the content, an
// error message or a panic value included, is capped like
// WithMaxToolOutput. A failure is an is-error result with the message a
// model would see in a run, and its kind; the kind is "" on success, and
// ToolCanceled when ctx ended first.
//
// t is the tool called: call's Name is set to t's, its ID is the result's
// CallID. Hooks, observers and usage limits belong to runs and do not
// apply. A tool that requires approval is refused (ToolDenied), since no
// human can be asked; an agent's tool (Agent.AsTool) runs its agent on rt,
// as a run of its own.
func (rt *Runtime) CallTool(ctx context.Context, t Tool, call ToolCallPart) (ToolResultPart, ToolErrorKind) {
	if t == nil {
		return errorResult(call, "Error: no tool to call."), ToolUnknown
	}
	spec := t.Spec()
	call.Name = spec.Name
	if PolicyOf(t).RequiresApproval {
		return errorResult(call, fmt.Sprintf("Error: %s requires a human's approval, which a call outside a run cannot ask for.", spec.Name)), ToolDenied
	}
	// A run of one tool, without a model: check and callTool need nothing
	// else of it.
	r := &run{rt: rt}
	r.ctx, r.scope = ctx, rt.scope
	r.tools, r.specs = []Tool{t}, []ToolSpec{spec}
	inv, msg, kind := r.check(call)
	if kind != "" {
		return errorResult(call, msg), kind
	}
	if at, ok := inv.tool.(*agentTool); ok {
		inv.tool = &agentCall{at: at, rt: rt} // not nested: there is no run
	}
	o := r.callTool(call, 0, &inv, false)
	return outcomeResult(call, o), o.kind
}

// agentCall is an agent's tool called by CallTool: its agent runs on the
// Runtime of the call.
type agentCall struct {
	at *agentTool
	rt *Runtime
}

func (c *agentCall) Spec() ToolSpec { return c.at.Spec() }

func (c *agentCall) Call(ctx context.Context, args json.RawMessage) (string, error) {
	ret, err := c.at.callOn(ctx, c.rt, args)
	return ret.text(), err
}

func (c *agentCall) CallParts(ctx context.Context, args json.RawMessage) (ToolOutput, error) {
	ret, err := c.at.callOn(ctx, c.rt, args)
	return ret.output(), err
}
