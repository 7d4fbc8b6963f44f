package runlet

import (
	"context"
	"fmt"
	"strconv"
)

// Checking a checkpoint before Resume acts on it. A checkpoint comes from
// a store, which other processes, backups and operators can change: it is
// input, like a model's output. Resume therefore acts only on a
// checkpoint that is consistent with the turn it interrupted, and a call
// whose tool needs approval runs only with a Decision for it.

// maxNestedDepth bounds how deep a checkpoint's Nested entries go (agents
// called as tools by agents called as tools ...).
const maxNestedDepth = 32

// invalidCheckpoint returns the *CheckpointError of run runID.
func invalidCheckpoint(runID, format string, args ...any) *CheckpointError {
	return &CheckpointError{RunID: runID, Reason: fmt.Sprintf(format, args...), Err: ErrInvalidCheckpoint}
}

// checkCheckpoint checks what a checkpoint says on its own: counts and
// indexes in range, and messages, pending calls, results and nested
// entries that fit the interrupted turn. The turn is the tool calls of the
// last message, an assistant's; each of them is exactly one of: pending
// (waiting for a decision), nested (an agent called as a tool that was
// itself interrupted, whose checkpoint is checked in turn) or done (a
// result). What needs the agent's tools is checkNestedTools'.
func checkCheckpoint(cp *Checkpoint, runID string) error {
	return checkLevel(cp, runID, "", 0)
}

func checkLevel(cp *Checkpoint, runID, at string, depth int) error {
	bad := func(format string, args ...any) error {
		return invalidCheckpoint(runID, at+format, args...)
	}
	switch {
	case cp == nil:
		return bad("it is empty (null)")
	case depth > maxNestedDepth:
		return bad("agents nested more than %d deep", maxNestedDepth)
	case cp.RunID != runID:
		return bad("it belongs to run %q", cp.RunID)
	case depth > 0 && cp.SessionID != "":
		// an agent called as a tool keeps no session of its own
		return bad("it names session %q", cp.SessionID)
	}
	if err := checkCounts(cp); err != "" {
		return bad("%s", err)
	}
	if len(cp.Messages) == 0 {
		return bad("it has no messages")
	}
	last := cp.Messages[len(cp.Messages)-1]
	if last.Role != RoleAssistant {
		return bad("its last message is a %q message, not the assistant's whose tool calls were interrupted", last.Role)
	}
	calls := last.ToolCalls()
	if len(calls) == 0 {
		return bad("its last message has no tool calls")
	}
	if cp.Committed == len(cp.Messages) {
		// A turn is stored with its results, so never before Resume: a
		// session said to hold it would keep the call as the model made
		// it while the run goes on with an approval's edit.
		return bad("committed %d includes the interrupted turn's assistant message", cp.Committed)
	}
	// how each call of the turn is accounted for: pending, nested or done
	how := make(map[string]string, len(calls))
	names := make(map[string]string, len(calls))
	for _, c := range calls {
		if c.ID == "" {
			return bad("a tool call of the interrupted turn (%s) has no ID", c.Name)
		}
		if _, dup := names[c.ID]; dup {
			return bad("two tool calls of the interrupted turn have the ID %q", c.ID)
		}
		names[c.ID] = c.Name
	}
	account := func(id, as string) error {
		if _, ok := names[id]; !ok {
			return bad("%s call %q is not a call of the interrupted turn", as, id)
		}
		if how[id] != "" {
			return bad("call %q is both %s and %s", id, how[id], as)
		}
		how[id] = as
		return nil
	}
	for _, p := range cp.Pending {
		if err := account(p.ID, "pending"); err != nil {
			return err
		}
		if p.Name != names[p.ID] {
			return bad("pending call %q is of tool %q, the turn's of %q", p.ID, p.Name, names[p.ID])
		}
	}
	for _, res := range cp.Results {
		if err := account(res.CallID, "done"); err != nil {
			return err
		}
	}
	for id, n := range cp.Nested {
		if err := account(id, "nested"); err != nil {
			return err
		}
		if err := checkLevel(n, runID, at+"nested call "+strconv.Quote(id)+": ", depth+1); err != nil {
			return err
		}
	}
	for _, c := range calls {
		if how[c.ID] == "" {
			return bad("call %q (%s) of the interrupted turn is neither pending, nested nor done", c.ID, c.Name)
		}
	}
	if len(cp.Pending) == 0 && len(cp.Nested) == 0 {
		return bad("no call waits for a decision")
	}
	return nil
}

// checkCounts returns what is out of range among cp's counts and indexes.
func checkCounts(cp *Checkpoint) string {
	n := len(cp.Messages)
	switch {
	case cp.Turn < 0:
		return "negative turn"
	case cp.HistoryLen < 0:
		return "negative history_len"
	case cp.Committed < 0 || cp.Committed > n:
		return fmt.Sprintf("committed %d is not between 0 and its %d messages", cp.Committed, n)
	case cp.ViewAt < 0 || cp.ViewAt > n:
		return fmt.Sprintf("view_at %d is not between 0 and its %d messages", cp.ViewAt, n)
	case cp.MaxTurns < 0:
		return "negative max_turns"
	case cp.ToolCalls < 0:
		return "negative tool_calls"
	case negativeUsage(cp.Usage):
		return "negative usage"
	case cp.Cost.Unpriced < 0:
		return "negative unpriced count"
	}
	if l := cp.Limits; l != nil && (l.InputTokens < 0 || l.OutputTokens < 0 || l.TotalTokens < 0 || l.Requests < 0 || l.ToolCalls < 0) {
		return "negative limits"
	}
	for _, m := range []map[string]Usage{cp.UsageByPurpose, cp.UsageByAgent, cp.UsageByModel} {
		for _, u := range m {
			if negativeUsage(u) {
				return "negative usage"
			}
		}
	}
	for _, m := range []map[string]Cost{cp.CostByModel, cp.CostByAgent} {
		for _, c := range m {
			if c.Unpriced < 0 {
				return "negative unpriced count"
			}
		}
	}
	return ""
}

func negativeUsage(u Usage) bool {
	return u.InputTokens < 0 || u.OutputTokens < 0 || u.TotalTokens < 0 || u.ReasoningTokens < 0 ||
		u.CachedInputTokens < 0 || u.CacheWriteTokens < 0 || u.Requests < 0 || u.WebSearchRequests < 0
}

// checkNestedTools checks what checkCheckpoint cannot without the
// agents: each nested entry is for a call of an agent called as a tool
// (AsTool) of the agent that made it, and is that agent's checkpoint (or
// that of an agent it hands off to). a is the agent that resumes at cp's
// level, and tool finds its tools by name.
func checkNestedTools(ctx context.Context, cp *Checkpoint, a *Agent, tool func(name string) (Tool, error), runID, at string) error {
	if len(cp.Nested) == 0 {
		return nil
	}
	calls := cp.Messages[len(cp.Messages)-1].ToolCalls()
	for _, c := range calls {
		n := cp.Nested[c.ID]
		if n == nil {
			continue
		}
		where := at + "nested call " + strconv.Quote(c.ID) + ": "
		t, err := tool(c.Name)
		if err != nil {
			return err
		}
		at2, ok := t.(*agentTool)
		if !ok {
			return invalidCheckpoint(runID, "%scall of %q, which is not an agent's tool (AsTool) of agent %q", where, c.Name, a.Name)
		}
		inner := at2.agent
		if n.Agent != "" && n.Agent != inner.Name {
			if inner = findAgent(at2.agent, n.Agent); inner == nil {
				return invalidCheckpoint(runID, "%sagent %q is neither %q nor an agent it hands off to", where, n.Agent, at2.agent.Name)
			}
		}
		if err := checkNestedTools(ctx, n, inner, func(name string) (Tool, error) { return toolNamed(ctx, inner, name) }, runID, where); err != nil {
			return err
		}
	}
	return nil
}

// toolNamed finds agent a's tool by name, among its Tools and Toolsets,
// as a run of a would; nil if it has none of that name.
func toolNamed(ctx context.Context, a *Agent, name string) (Tool, error) {
	for _, t := range a.Tools {
		if t != nil && t.Spec().Name == name {
			return t, nil
		}
	}
	for i, ts := range a.Toolsets {
		if ts == nil {
			continue
		}
		tools, err := ts.Tools(ctx)
		if err != nil {
			return nil, fmt.Errorf("runlet: agent %q: toolset %d: %w", a.Name, i, err)
		}
		for _, t := range tools {
			if t != nil && t.Spec().Name == name {
				return t, nil
			}
		}
	}
	return nil, nil
}
