package runlet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Checkpoint and resume: an interrupted run saves what it needs to go on,
// and Resume claims it and continues the same run.

// interrupt checkpoints the run and ends it as interrupted. It returns
// errEnded, or why the checkpoint could not be saved.
func (r *run) interrupt(calls []ToolCallPart, results []ToolResultPart, pending []int) error {
	limits := r.limits
	cp := &Checkpoint{
		RunID:      r.cfg.runID,
		SessionID:  r.cfg.sessionID,
		Agent:      r.agent.Name,
		Turn:       r.info.Turn,
		HistoryLen: r.sessionLen,
		Committed:  r.committed,
		Messages:   slices.Clone(r.added),
		Usage:      r.usage,
		Cost:       r.cost,
		Settings:   r.cfg.settings,
		Options:    r.cfg.options,
		Limits:     &limits,
		MaxTurns:   r.maxTurns,
		CreatedAt:  time.Now().UTC(),
	}
	if r.depth == 0 { // the whole run's counts
		l := r.ledger
		l.mu.Lock()
		cp.Usage, cp.ToolCalls = l.usage, l.toolCalls
		cp.UsageByPurpose, cp.UsageByAgent = maps.Clone(l.byPurpose), maps.Clone(l.byAgent)
		cp.UsageByModel, cp.Cost, cp.CostByModel = maps.Clone(l.byModel), l.cost, maps.Clone(l.costByModel)
		cp.CostByAgent = maps.Clone(l.costByAgent)
		l.mu.Unlock()
	}
	if r.cfg.sessionID == "" {
		cp.History = r.history
	}
	cp.View, cp.ViewAt, cp.Filtered = r.view, r.viewAt, r.filtered
	isPending := make(map[int]bool, len(pending))
	for _, i := range pending {
		isPending[i] = true
		if n := r.pausedCalls[calls[i].ID]; n != nil {
			if cp.Nested == nil {
				cp.Nested = make(map[string]*Checkpoint)
			}
			cp.Nested[calls[i].ID] = n
			continue
		}
		cp.Pending = append(cp.Pending, calls[i])
	}
	for i, res := range results {
		if !isPending[i] {
			cp.Results = append(cp.Results, res)
		}
	}
	if r.parent != nil {
		r.paused = cp // kept in the caller's checkpoint
	} else if err := r.saveCheckpoint(cp); err != nil {
		return fmt.Errorf("runlet: saving checkpoint: %w", err)
	}
	res := r.snapshot(StateInterrupted)
	res.Pending = pendingCalls(cp)
	r.result = res
	r.transition(StateInterrupted)
	r.emit(&RunInterrupted{Pending: res.Pending, Result: res})
	return errEnded
}

// saveCheckpoint saves cp, with its MAC if the Runtime has a key.
func (r *run) saveCheckpoint(cp *Checkpoint) error {
	if k := r.rt.checkpointKeys; k != nil {
		if err := k.sign(cp); err != nil {
			return err
		}
	}
	return r.rt.checkpoints.SaveCheckpoint(context.WithoutCancel(r.ctx), cp)
}

// pendingCalls lists the calls of cp waiting for a decision, its own and
// its nested agents', in the order the models made them.
func pendingCalls(cp *Checkpoint) []ToolCallPart {
	if len(cp.Nested) == 0 || len(cp.Messages) == 0 {
		return cp.Pending
	}
	var out []ToolCallPart
	for _, c := range cp.Messages[len(cp.Messages)-1].ToolCalls() {
		if n := cp.Nested[c.ID]; n != nil {
			out = append(out, pendingCalls(n)...)
			continue
		}
		for _, p := range cp.Pending {
			if p.ID == c.ID {
				out = append(out, p)
			}
		}
	}
	return out
}

// startResume checks and claims the checkpoint and validates the
// decisions. It returns the interrupted turn's calls and the results known
// so far.
func (r *run) startResume() ([]ToolCallPart, []ToolResultPart, error) {
	fail := func(err error) ([]ToolCallPart, []ToolResultPart, error) {
		return nil, nil, fmt.Errorf("runlet: resuming run %q: %w", r.cfg.runID, err)
	}
	store := r.rt.checkpoints
	cp := r.from // a nested agent's, checked with its caller's
	if cp == nil {
		var err error
		if cp, err = r.loadCheckpoint(store.LoadCheckpoint); err != nil {
			return fail(err)
		}
	}
	if cp.SessionID != "" && r.rt.sessions == nil {
		return fail(noSessionStore(cp.SessionID))
	}
	if err := checkDecisions(pendingCalls(cp), r.decided); err != nil {
		return fail(err)
	}
	// The run goes on with the agent it was at: after handoffs, found by
	// name among the agents the given one hands off to.
	if cp.Agent != "" && cp.Agent != r.agent.Name {
		a := findAgent(r.agent, cp.Agent)
		if a == nil {
			return fail(invalidCheckpoint(r.cfg.runID, "its agent %q is neither %q nor an agent it hands off to", cp.Agent, r.agent.Name))
		}
		r.agent, r.info.Agent = a, a.Name
	}
	// The resumed run is the same run: its own settings, options and
	// limits, and the counts so far (see Checkpoint for older checkpoints).
	r.cfg.options, r.cfg.settings, r.cfg.limits = cp.Options, cp.Settings, cp.Limits
	if err := r.setup(); err != nil {
		return fail(err)
	}
	if r.from == nil {
		tool := func(name string) (Tool, error) { return r.toolOf(name), nil }
		if err := checkNestedTools(r.ctx, cp, r.agent, tool, r.cfg.runID, ""); err != nil {
			return fail(err)
		}
		if err := checkEdits(r.ctx, cp, r.agent, tool, decisionsByID(r.decided)); err != nil {
			return fail(err)
		}
		// Claim atomically: of several concurrent resumes exactly one
		// proceeds, with the checkpoint checked above.
		claimed, err := store.ClaimCheckpoint(r.ctx, r.cfg.runID)
		if err != nil {
			return fail(err)
		}
		if claimed == nil || !sameCheckpoint(cp, claimed) {
			// Changed since it was loaded: put it back, unused, for a
			// resume that loads (and checks) it again.
			if claimed != nil {
				if err := store.SaveCheckpoint(context.WithoutCancel(r.ctx), claimed); err != nil {
					return fail(fmt.Errorf("checkpoint changed while resuming, and putting it back failed: %w", err))
				}
			}
			return fail(fmt.Errorf("checkpoint changed while resuming; load it again: %w", ErrConflict))
		}
		r.info.SessionID = cp.SessionID
	}
	r.cfg.sessionID = cp.SessionID
	r.info.Turn = cp.Turn
	r.history = cp.History
	r.sessionLen = cp.HistoryLen
	if cp.SessionID != "" {
		hist, err := r.rt.sessions.LoadSession(r.ctx, cp.SessionID)
		if err != nil {
			return nil, nil, fmt.Errorf("runlet: loading session %q: %w", cp.SessionID, err)
		}
		if len(hist) != cp.HistoryLen+cp.Committed {
			return nil, nil, fmt.Errorf("runlet: session %q changed while run %q was interrupted: %w", cp.SessionID, cp.RunID, ErrConflict)
		}
		r.history = hist[:cp.HistoryLen]
		r.committed = cp.Committed
	}
	r.added = cp.Messages
	r.view, r.viewAt, r.filtered = cp.View, cp.ViewAt, cp.Filtered
	r.usage = cp.Usage
	if r.depth == 0 {
		l := r.ledger
		l.usage, l.byPurpose, l.byAgent, l.toolCalls = cp.Usage, cp.UsageByPurpose, cp.UsageByAgent, cp.ToolCalls
		if l.byPurpose == nil && cp.Usage.Requests > 0 { // a checkpoint from before purposes
			l.byPurpose = map[string]Usage{PurposeAgent: cp.Usage}
		}
		if l.byAgent == nil && cp.Usage.Requests > 0 { // ... or before agents
			l.byAgent = map[string]Usage{cp.Agent: cp.Usage}
		}
		l.byModel, l.cost, l.costByModel = cp.UsageByModel, cp.Cost, cp.CostByModel
		if l.byModel == nil && cp.Usage.Requests > 0 { // ... or before costs
			l.byModel = map[string]Usage{"": cp.Usage}
			l.cost = Cost{Unpriced: cp.Usage.Requests}
			l.costByModel = map[string]Cost{"": l.cost}
		}
		if l.costByAgent = cp.CostByAgent; l.costByAgent == nil && cp.Usage.Requests > 0 { // ... or before costs by agent
			l.costByAgent = map[string]Cost{cp.Agent: l.cost}
		}
	} else {
		r.cost = cp.Cost
	}
	if cp.MaxTurns > 0 {
		r.maxTurns = cp.MaxTurns
	}
	r.emit(&RunResumed{SessionID: cp.SessionID, Decisions: r.decided})

	last := cp.Messages[len(cp.Messages)-1]
	calls := last.ToolCalls()
	byID := decisionsByID(r.decided)
	done := make(map[string]ToolResultPart, len(cp.Results))
	for _, res := range cp.Results {
		done[res.CallID] = res
	}
	known := make([]ToolResultPart, len(calls)) // zero CallID: not known yet
	r.approved, r.rejected = make(map[string]bool), make(map[string]bool)
	for i, c := range calls {
		if res, ok := done[c.ID]; ok {
			known[i] = res
			continue
		}
		if n := cp.Nested[c.ID]; n != nil {
			// The call resumes the agent it ran, with the decisions for it
			// (checkNestedTools made sure it is an agent's tool). Its
			// call was approved, if it needed approval, before it ran.
			if r.nested == nil {
				r.nested, r.nestedDec = make(map[string]*Checkpoint), make(map[string][]Decision)
			}
			r.nested[c.ID] = n
			for _, p := range pendingCalls(n) {
				r.nestedDec[c.ID] = append(r.nestedDec[c.ID], byID[p.ID])
			}
			r.approved[c.ID] = true
			continue
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
				r.approved[c.ID] = true
			}
		}
	}
	r.applyEdits(calls, byID)
	return calls, known, nil
}

// loadCheckpoint loads (or claims) the run's checkpoint with load and
// checks it: its MAC, if the Runtime has a key, then its consistency.
func (r *run) loadCheckpoint(load func(context.Context, string) (*Checkpoint, error)) (*Checkpoint, error) {
	runID := r.cfg.runID
	cp, err := load(r.ctx, runID)
	switch {
	case err != nil:
		return nil, err
	case cp == nil:
		return nil, invalidCheckpoint(runID, "the store returned none")
	}
	if k := r.rt.checkpointKeys; k != nil {
		if err := k.verify(cp, runID); err != nil {
			return nil, err
		}
	}
	if err := checkCheckpoint(cp, runID); err != nil {
		return nil, err
	}
	return cp, nil
}

// sameCheckpoint reports whether a and b encode the same.
func sameCheckpoint(a, b *Checkpoint) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func noSessionStore(id string) error {
	return fmt.Errorf("runlet: session %q needs a session store and this Runtime has none; "+
		"create it with runlet.NewRuntime(runlet.WithStore(runlet.NewMemoryStore())) to keep sessions in this process, "+
		"or with a durable store (store/sqlite, store/postgres): %w", id, ErrNoSession)
}
