package runlet

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// PurposeAgent is the purpose of the agent's own model calls, one per turn,
// in ModelStarted, ModelFinished and Result.UsageByPurpose. Calls a preparer
// makes through CallModel carry the purpose it names ("summarize" for
// Summarizer).
const PurposeAgent = "agent"

// CallModel makes a model call on behalf of the run ctx belongs to, as a
// Preparer does to summarise, or a Guardrail's check to classify: the call is counted in the run's
// usage (Result.Usage, and Result.UsageByPurpose under purpose), checked
// against its usage limits (an error wrapping ErrUsageLimit stops the run
// with that limit's policy), and reported as ModelStarted and ModelFinished
// events labelled with purpose. Nothing that costs tokens is invisible.
//
// A check's calls are also labelled with the check (ModelStarted.Check).
// Outside a Preparer's Prepare or a check it simply calls m.Generate.
func CallModel(ctx context.Context, purpose string, m Model, req *ModelRequest) (*ModelResponse, error) {
	if gc, ok := ctx.Value(guardKey{}).(*guardCall); ok {
		return gc.model(ctx, purpose, m, req)
	}
	ri := runInfo(ctx)
	if ri == nil || ri.run == nil {
		return m.Generate(ctx, req)
	}
	return ri.run.callFor(ctx, purpose, m, req)
}

// callFor is CallModel inside a run, on the run's goroutine.
func (r *run) callFor(ctx context.Context, purpose string, m Model, req *ModelRequest) (*ModelResponse, error) {
	if r.limits.Requests > 0 && r.ledger.total().Requests >= r.limits.Requests {
		r.limitHit = "usage_limit:requests"
		return nil, fmt.Errorf("%w: %d model requests", ErrUsageLimit, r.limits.Requests)
	}
	if r.watched {
		r.emit(&ModelStarted{Purpose: purpose, Request: req})
	}
	start := time.Now()
	resp, err := m.Generate(ctx, req)
	if err == nil && resp == nil {
		err = &ProviderError{Message: "model returned no response and no error"}
	}
	if err != nil {
		return nil, err
	}
	_, cost := r.account(purpose, resp)
	if r.watched {
		r.emit(&ModelFinished{Purpose: purpose, Response: resp, Cost: cost, Duration: time.Since(start)})
	}
	if policy, err := r.checkTokens(); err != nil {
		r.limitHit = policy
		return nil, err
	}
	return resp, nil
}

// account adds one model call's usage to the agent's and to the run's
// ledger (in total, under its purpose, its agent and the model that
// answered), prices it, and returns the usage normalised (one request, a
// total) and the call's cost.
func (r *run) account(purpose string, resp *ModelResponse) (Usage, Cost) {
	u := resp.Usage
	if u.Requests == 0 {
		u.Requests = 1
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	r.usage = r.usage.Add(u)
	c := r.price(resp.Model, u)
	r.cost = r.cost.Add(c)
	r.ledger.add(r.agent.Name, purpose, resp.Model, u, c)
	return u, c
}

// ledger counts what a whole run uses, its agent and every agent it calls
// as a tool (from their own goroutines), against the run's one set of
// limits.
type ledger struct {
	mu          sync.Mutex
	usage       Usage
	byPurpose   map[string]Usage
	byAgent     map[string]Usage
	byModel     map[string]Usage
	cost        Cost
	costByModel map[string]Cost
	costByAgent map[string]Cost
	toolCalls   int
}

func (l *ledger) add(agent, purpose, model string, u Usage, c Cost) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.usage = l.usage.Add(u)
	l.byPurpose = addTo(l.byPurpose, purpose, u)
	l.byAgent = addTo(l.byAgent, agent, u)
	l.byModel = addTo(l.byModel, model, u)
	l.cost = l.cost.Add(c)
	l.costByModel = addTo(l.costByModel, model, c)
	l.costByAgent = addTo(l.costByAgent, agent, c)
}

func addTo[V interface{ Add(V) V }](m map[string]V, k string, v V) map[string]V {
	if m == nil {
		m = make(map[string]V, 1)
	}
	m[k] = m[k].Add(v)
	return m
}

func (l *ledger) total() Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.usage
}

// tools returns the tool calls executed so far.
func (l *ledger) tools() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.toolCalls
}

func (l *ledger) addTools(n int) {
	l.mu.Lock()
	l.toolCalls += n
	l.mu.Unlock()
}

// fill sets the run-wide usage fields of res, the run's final Result. The
// Result takes the maps: the ledger lets go of them, and a call counted
// after this (a tool the run abandoned, still running an agent) starts new
// ones nobody reads, rather than changing the caller's.
func (l *ledger) fill(res *Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res.Usage, res.Cost = l.usage, l.cost
	res.UsageByPurpose, res.UsageByAgent, res.UsageByModel = l.byPurpose, l.byAgent, l.byModel
	res.CostByModel, res.CostByAgent = l.costByModel, l.costByAgent
	l.byPurpose, l.byAgent, l.byModel, l.costByModel, l.costByAgent = nil, nil, nil, nil, nil
}
