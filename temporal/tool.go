package temporal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
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
	start := time.Now()
	content, kind := d.call(ctx, t, pol, args)
	if max := cmp.Or(pol.MaxOutput, d.cfg.MaxToolOutput); max > 0 {
		content = truncate(content, max)
	}
	return finish(runlet.ToolResultPart{Content: content, IsError: kind != ""}, kind, time.Since(start))
}

// call runs the tool, heartbeating while it runs, and turns its failures
// into messages for the model.
func (d *Durable) call(ctx context.Context, t runlet.Tool, pol runlet.ToolPolicy, args json.RawMessage) (content string, kind runlet.ToolErrorKind) {
	timeout := cmp.Or(pol.Timeout, d.cfg.ToolTimeout)
	tctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		tctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	stop := heartbeat(ctx)
	defer stop()
	var s string
	err := func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				slog.Default().Error("runlet/temporal: tool panicked", "tool", t.Spec().Name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				err = &runlet.ToolError{Tool: t.Spec().Name, Kind: runlet.ToolPanicked, Err: fmt.Errorf("panic: %v", v)}
			}
		}()
		s, err = t.Call(tctx, args)
		return err
	}()
	var te *runlet.ToolError
	switch {
	case err == nil:
		return s, ""
	case ctx.Err() != nil:
		return "Error: the run was cancelled while the tool ran.", runlet.ToolCanceled
	case timeout > 0 && errors.Is(tctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("Error: the tool timed out after %s.", timeout), runlet.ToolTimedOut
	case errors.As(err, &te) && te.Kind == runlet.ToolPanicked:
		return fmt.Sprintf("Error: the tool crashed (%v).", te.Err), runlet.ToolPanicked
	case errors.As(err, &te) && (te.Kind == runlet.ToolInvalidArgs || te.Kind == runlet.ToolInvalidJSON):
		return fmt.Sprintf("Error: invalid arguments for %s: %s. Fix the arguments to match the tool's input schema and call it again.", te.Tool, truncate(te.Err.Error(), maxQuoted)), te.Kind
	case errors.As(err, &te):
		return "Error: " + te.Err.Error(), te.Kind
	}
	return "Error: " + err.Error(), runlet.ToolFailed
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
