package runlet

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Checkpoint and resume: an interrupted run saves what it needs to go on,
// and Resume claims it and continues the same run.

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
		UsageByModel:   maps.Clone(r.byModel),
		Cost:           r.cost,
		CostByModel:    maps.Clone(r.costByModel),
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
	r.byModel, r.cost, r.costByModel = cp.UsageByModel, cp.Cost, cp.CostByModel
	if r.byModel == nil && cp.Usage.Requests > 0 { // a checkpoint from before costs
		r.byModel = map[string]Usage{"": cp.Usage}
		r.cost = Cost{Unpriced: cp.Usage.Requests}
		r.costByModel = map[string]Cost{"": r.cost}
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
