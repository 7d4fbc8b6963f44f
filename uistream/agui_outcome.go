package uistream

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/runlet/runlet"
)

// How agents called as tools, and the run, end in AG-UI.

// parentPath is the CallPath of the agent that called the agent at path.
func parentPath(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return ""
	}
	return path[:i]
}

func (e *aguiEncoder) subagentStarted(w *frameWriter, ev *runlet.AgentStarted) error {
	path := ev.CallPath
	parent := parentPath(path)
	return w.data(aguiSubagentStarted{aguiBase: base("SUBAGENT_STARTED", ev), SubagentRunID: path, Name: ev.Agent,
		ParentSubagentRunID: parent, ParentToolCallID: strings.TrimPrefix(path[len(parent):], "/")})
}

func (e *aguiEncoder) subagentFinished(w *frameWriter, s *aguiScope, ev *runlet.AgentFinished) error {
	if err := e.closeScope(w, s, ev); err != nil {
		return err
	}
	delete(e.scopes, ev.CallPath)
	switch ev.Status {
	case runlet.StateFailed:
		text := e.opts.ErrorText(errors.New(ev.Error), &runlet.RunFailed{EventHeader: ev.EventHeader,
			Error: ev.Error, ErrorType: ev.ErrorType, Policy: ev.Policy, Result: ev.Result})
		return w.data(aguiSubagentError{aguiBase: base("SUBAGENT_ERROR", ev), SubagentRunID: ev.CallPath, Message: text, Code: ev.ErrorType})
	case runlet.StateInterrupted:
		out := &aguiSubOutcome{Type: "suspended"}
		if ev.Result != nil {
			for _, p := range ev.Result.Pending {
				out.InterruptIDs = append(out.InterruptIDs, aguiInterruptID(ev.RunID, p.ID))
			}
		}
		return w.data(aguiSubagentFinished{aguiBase: base("SUBAGENT_FINISHED", ev), SubagentRunID: ev.CallPath, Outcome: out})
	}
	return w.data(aguiSubagentFinished{aguiBase: base("SUBAGENT_FINISHED", ev), SubagentRunID: ev.CallPath, Outcome: &aguiSubOutcome{Type: "success"}})
}

// closeScope ends what is open in s: messages, tool calls, its step.
func (e *aguiEncoder) closeScope(w *frameWriter, s *aguiScope, ev runlet.Event) error {
	if err := e.closeMessages(w, s, ev); err != nil {
		return err
	}
	if err := e.endCalls(w, s, ev); err != nil {
		return err
	}
	return e.closeStep(w, s, ev)
}

// closeAll ends what is open in every agent, sub-agents first, before the
// run's last event: AG-UI's client refuses RUN_FINISHED while anything is
// open.
func (e *aguiEncoder) closeAll(w *frameWriter, ev runlet.Event) error {
	for i := len(e.order) - 1; i >= 0; i-- {
		path := e.order[i]
		s := e.scopes[path]
		if s == nil {
			continue
		}
		if err := e.closeScope(w, s, ev); err != nil {
			return err
		}
		if path != "" {
			delete(e.scopes, path)
			if err := w.data(aguiSubagentFinished{aguiBase: base("SUBAGENT_FINISHED", ev), SubagentRunID: path}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *aguiEncoder) finished(w *frameWriter, ev *runlet.RunFinished) error {
	if err := e.closeAll(w, ev); err != nil {
		return err
	}
	if e.state != nil {
		if err := e.state.check(w, ev); err != nil {
			return err
		}
	}
	e.ended = true
	out := aguiRunFinished{aguiBase: base("RUN_FINISHED", ev), ThreadID: e.in.ThreadID, RunID: e.in.RunID, Outcome: &aguiOutcome{Type: "success"}}
	if res := ev.Result; res != nil {
		out.Usage, out.Metadata = aguiUsageOf(res), aguiRunMetaOf(res)
		if e.typed && json.Valid([]byte(res.Output)) {
			out.Result = json.RawMessage(res.Output)
		}
	}
	return w.data(out)
}

// aguiUsageOf lists the run's usage by model, in the protocol's terms.
func aguiUsageOf(res *runlet.Result) []aguiUsage {
	byModel := res.UsageByModel
	if len(byModel) == 0 {
		if res.Usage == (runlet.Usage{}) {
			return nil
		}
		byModel = map[string]runlet.Usage{"": res.Usage}
	}
	models := make([]string, 0, len(byModel))
	for m := range byModel {
		models = append(models, m)
	}
	slices.Sort(models)
	out := make([]aguiUsage, 0, len(models))
	for _, m := range models {
		u := byModel[m]
		out = append(out, aguiUsage{Model: m, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens,
			ReasoningTokens: u.ReasoningTokens, CachedInputTokens: u.CachedInputTokens, CacheWriteTokens: u.CacheWriteTokens})
	}
	return out
}

// interrupted ends the run with AG-UI's interrupt outcome: one interrupt
// per call waiting for approval, answered by the next run's resume. It
// sends no MESSAGES_SNAPSHOT: the client has every message from the
// stream, and the resume goes on from Runlet's checkpoint, not from the
// client's messages.
func (e *aguiEncoder) interrupted(w *frameWriter, ev *runlet.RunInterrupted) error {
	if err := e.closeAll(w, ev); err != nil {
		return err
	}
	if e.state != nil {
		// AG-UI's interrupts page asks for the state as a snapshot before
		// the interrupt, so that a client can resume from it alone.
		if err := e.state.snapshot(w, ev); err != nil {
			return err
		}
	}
	e.ended = true
	if ids := e.pageCalls(ev.Pending); len(ids) == len(ev.Pending) {
		// Only the page's tools wait: the run succeeded, as AG-UI has it,
		// leaving calls for the page to answer.
		run := aguiRunFinished{aguiBase: base("RUN_FINISHED", ev), ThreadID: e.in.ThreadID, RunID: e.in.RunID,
			Outcome: &aguiOutcome{Type: "success", PendingToolCallIDs: ids}}
		if ev.Result != nil {
			run.Usage, run.Metadata = aguiUsageOf(ev.Result), aguiRunMetaOf(ev.Result)
		}
		return w.data(run)
	}
	out := &aguiOutcome{Type: "interrupt"}
	for _, p := range ev.Pending {
		meta := &aguiCallMeta{}
		meta.Runlet.Tool, meta.Runlet.Arguments = p.Name, p.Arguments
		if !json.Valid(meta.Runlet.Arguments) {
			meta.Runlet.Arguments = nil
		}
		out.Interrupts = append(out.Interrupts, aguiInterrupt{
			SubagentRunID: e.callSub[p.ID], ID: aguiInterruptID(ev.RunID, p.ID), Reason: "tool_call",
			Message: "Allow the call of " + p.Name + "?", ToolCallID: p.ID,
			ResponseSchema: json.RawMessage(aguiResponseSchema), Metadata: meta,
		})
	}
	if len(out.Interrupts) == 0 { // cannot happen: an interruption waits for a call
		return e.runError(w, ev, errors.New("the run was interrupted with no call waiting"), nil)
	}
	run := aguiRunFinished{aguiBase: base("RUN_FINISHED", ev), ThreadID: e.in.ThreadID, RunID: e.in.RunID, Outcome: out}
	if ev.Result != nil {
		run.Usage, run.Metadata = aguiUsageOf(ev.Result), aguiRunMetaOf(ev.Result)
	}
	return w.data(run)
}

// pageCalls returns the IDs of the pending calls of the page's tools made
// by the run's own agent.
func (e *aguiEncoder) pageCalls(pending []runlet.ToolCallPart) []string {
	var ids []string
	for _, p := range pending {
		if e.pageTools[p.Name] && e.callSub[p.ID] == "" {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

func (e *aguiEncoder) failed(w *frameWriter, ev *runlet.RunFailed, err error) error {
	if err == nil {
		err = errors.New(ev.Error)
	}
	return e.runError(w, ev, err, ev)
}

func (e *aguiEncoder) runError(w *frameWriter, ev runlet.Event, err error, failed *runlet.RunFailed) error {
	e.ended = true
	out := aguiRunError{aguiBase: base("RUN_ERROR", ev), Message: e.opts.ErrorText(err, failed)}
	if failed != nil {
		out.Code, out.Metadata = failed.ErrorType, aguiRunMetaOf(failed.Result)
	}
	return w.data(out)
}
