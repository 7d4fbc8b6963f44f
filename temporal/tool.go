package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// toolActivity runs one tool call the way Runlet's loop does: the
// BeforeToolCall hooks and the approval policy first, then the tool with
// its timeout, every failure turned into an is-error result the model sees,
// then the AfterToolCall hooks. A call that needs a decision returns
// Pending without running.
func (d *Durable) toolActivity(ctx context.Context, in ToolInput) (*ToolOutput, error) {
	agent, err := d.agent(in.Agent)
	if err != nil {
		return nil, err
	}
	tools, err := agentTools(ctx, agent)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRun, err)
	}
	ctx = runlet.ContextWithRunInfo(ctx, runlet.RunInfo{RunID: in.RunID, SessionID: in.SessionID, Agent: in.Agent, Turn: in.Turn}, d.stateStore())
	c := in.Call
	out := &ToolOutput{}
	finish := func(res runlet.ToolResultPart, kind runlet.ToolErrorKind, dur time.Duration) (*ToolOutput, error) {
		res.CallID, res.Name = c.ID, c.Name
		for _, h := range d.cfg.Hooks {
			if h.AfterToolCall != nil {
				if err := h.AfterToolCall(ctx, c, &res); err != nil {
					return nil, policyError(err, "hook:AfterToolCall")
				}
			}
		}
		slim, ref, err := d.offloadResult(ctx, res)
		if err != nil {
			return nil, err // the store failed: retried, under the activity's policy
		}
		out.Result, out.ErrorKind, out.Ref = slim, kind, ref
		d.emitTool(ctx, in, &runlet.ToolFinished{Call: c, Result: res, ErrorKind: kind, Duration: dur})
		return out, nil
	}
	for _, h := range d.cfg.Hooks {
		if h.BeforeToolCall == nil {
			continue
		}
		res, err := h.BeforeToolCall(ctx, &c)
		switch {
		case errors.Is(err, runlet.ErrApprovalRequired):
			if in.Approved {
				continue
			}
			out.Pending = true
			return out, nil
		case err != nil && strings.HasPrefix(err.Error(), "denied: "):
			d.emitTool(ctx, in, &runlet.ToolStarted{Call: c})
			return finish(errorResult("Error: call denied: "+strings.TrimPrefix(err.Error(), "denied: ")), runlet.ToolDenied, 0)
		case err != nil:
			return nil, policyError(err, "hook:BeforeToolCall")
		case res != nil:
			d.emitTool(ctx, in, &runlet.ToolStarted{Call: c})
			return finish(*res, "", 0)
		}
	}
	t, ok := tools[c.Name]
	pol := runlet.PolicyOf(t)
	if ok && pol.RequiresApproval && !in.Approved {
		out.Pending = true
		return out, nil
	}
	d.emitTool(ctx, in, &runlet.ToolStarted{Call: c})
	if !ok {
		names := make([]string, 0, len(tools))
		for n := range tools {
			names = append(names, n)
		}
		slices.Sort(names)
		return finish(errorResult(fmt.Sprintf("Error: unknown tool %q. Available tools: %s.", truncate(c.Name, maxQuoted), strings.Join(names, ", "))), runlet.ToolUnknown, 0)
	}
	args := c.Arguments
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return finish(errorResult(fmt.Sprintf("Error: the arguments are not valid JSON. Call %s again with a JSON object.", c.Name)), runlet.ToolInvalidJSON, 0)
	}
	g := guard{d: d, agent: in.Agent, runID: in.RunID, turn: in.Turn}
	checks := append(d.guardrails(agent, runlet.GuardToolCall), d.guardrails(agent, runlet.GuardToolResult)...)
	for _, gr := range checks {
		if gr.ToolCall == nil {
			continue
		}
		v, err := g.check(ctx, gr, runlet.GuardToolCall, c.ID, func(ctx context.Context) (runlet.GuardrailVerdict, error) {
			return gr.ToolCall(ctx, c)
		})
		if err != nil {
			return nil, err
		}
		if v.Action == runlet.GuardrailReject {
			return finish(rejected(v), runlet.ToolDenied, 0)
		}
	}
	start := time.Now()
	res, kind := d.call(ctx, t, c, in.Approved)
	for _, gr := range checks {
		if gr.ToolResult == nil {
			continue
		}
		v, err := g.check(ctx, gr, runlet.GuardToolResult, c.ID, func(ctx context.Context) (runlet.GuardrailVerdict, error) {
			return gr.ToolResult(ctx, c, res)
		})
		if err != nil {
			return nil, err
		}
		if v.Action == runlet.GuardrailReject {
			res, kind = rejected(v), runlet.ToolDenied
			break
		}
	}
	return finish(res, kind, time.Since(start))
}

// call runs the call through Runlet's own executor (Runtime.CallTool):
// the arguments checked against the tool's input schema, its timeout, a
// panic recovered, every failure an is-error result with the message a
// model would see in a run, and the output (text, images, files, audio, a
// structured value) capped as in a run. It heartbeats while the tool
// runs, so a worker dying mid-call is noticed and a cancelled run reaches
// the tool through ctx.
func (d *Durable) call(ctx context.Context, t runlet.Tool, c runlet.ToolCallPart, approved bool) (runlet.ToolResultPart, runlet.ToolErrorKind) {
	if approved && runlet.PolicyOf(t).RequiresApproval {
		t = approvedTool{t} // a human approved this call: CallTool refuses it otherwise
	}
	stop := heartbeat(ctx)
	defer stop()
	return d.tools.CallTool(ctx, t, c)
}

// approvedTool is a tool that requires approval, for a call a human
// approved.
type approvedTool struct{ runlet.Tool }

func (a approvedTool) Policy() runlet.ToolPolicy {
	p := runlet.PolicyOf(a.Tool)
	p.RequiresApproval = false
	return p
}

func (a approvedTool) CallParts(ctx context.Context, args json.RawMessage) (runlet.ToolOutput, error) {
	return runlet.CallParts(ctx, a.Tool, args)
}

// heartbeat records a heartbeat every second until stop is called, so that
// a worker dying mid-call is noticed after the heartbeat timeout and a
// cancelled run reaches the tool through ctx.
func heartbeat(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (d *Durable) emitTool(ctx context.Context, in ToolInput, ev runlet.Event) {
	if len(d.cfg.Observers) == 0 {
		return
	}
	h := header(ev)
	h.RunID, h.Agent, h.Time = in.RunID, in.Agent, time.Now().UTC()
	restamp(ev, in.Turn)
	d.observe(ctx, ev)
}

// maxQuoted bounds what an error message for the model quotes of its call
// (a validation error quotes the value it rejects, an unknown tool its
// name), as in Runlet.
const maxQuoted = 1 << 10

// truncate shortens s to at most max bytes on a UTF-8 boundary and says how
// much was cut, as Runlet does.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[output truncated: showing %d of %d bytes]", cut, len(s))
}

// agentTools returns the agent's tools by name: its Tools and the current
// tools of its Toolsets.
func agentTools(ctx context.Context, a *runlet.Agent) (map[string]runlet.Tool, error) {
	tools := make(map[string]runlet.Tool, len(a.Tools))
	for _, t := range a.Tools {
		if t != nil {
			tools[t.Spec().Name] = t
		}
	}
	for i, ts := range a.Toolsets {
		if ts == nil {
			continue
		}
		more, err := ts.Tools(ctx)
		if err != nil {
			return nil, fmt.Errorf("runlet/temporal: agent %q: toolset %d: %w", a.Name, i, err)
		}
		for _, t := range more {
			if t != nil {
				tools[t.Spec().Name] = t
			}
		}
	}
	return tools, nil
}

func errorResult(msg string) runlet.ToolResultPart {
	return runlet.ToolResultPart{Content: msg, IsError: true}
}

func policyError(err error, policy string) error {
	pe := &runlet.PolicyError{Policy: policy, Err: err}
	return temporal.NewNonRetryableApplicationError(pe.Error(), ErrTypePolicy, err, policy)
}
