package runlet

import (
	"context"
	"fmt"
	"time"
)

// PurposeAgent is the purpose of the agent's own model calls, one per turn,
// in ModelStarted, ModelFinished and Result.UsageByPurpose. Calls a preparer
// makes through CallModel carry the purpose it names ("summarize" for
// Summarizer).
const PurposeAgent = "agent"

// CallModel makes a model call on behalf of the run ctx belongs to, as a
// Preparer does to summarise or classify: the call is counted in the run's
// usage (Result.Usage, and Result.UsageByPurpose under purpose), checked
// against its usage limits (an error wrapping ErrUsageLimit stops the run
// with that limit's policy), and reported as ModelStarted and ModelFinished
// events labelled with purpose. Nothing that costs tokens is invisible.
//
// Outside a Preparer's Prepare it simply calls m.Generate.
func CallModel(ctx context.Context, purpose string, m Model, req *ModelRequest) (*ModelResponse, error) {
	ri := runInfo(ctx)
	if ri == nil || ri.run == nil {
		return m.Generate(ctx, req)
	}
	return ri.run.callFor(ctx, purpose, m, req)
}

// callFor is CallModel inside a run, on the run's goroutine.
func (r *run) callFor(ctx context.Context, purpose string, m Model, req *ModelRequest) (*ModelResponse, error) {
	if r.limits.Requests > 0 && r.usage.Requests >= r.limits.Requests {
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

// account adds one model call's usage to the run's, in total, under its
// purpose and under the model that answered, prices it, and returns the
// usage normalised (one request, a total) and the call's cost.
func (r *run) account(purpose string, resp *ModelResponse) (Usage, Cost) {
	u := resp.Usage
	if u.Requests == 0 {
		u.Requests = 1
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	r.usage = r.usage.Add(u)
	if r.byPurpose == nil {
		r.byPurpose = make(map[string]Usage, 2)
	}
	r.byPurpose[purpose] = r.byPurpose[purpose].Add(u)
	if r.byModel == nil {
		r.byModel = make(map[string]Usage, 1)
	}
	if r.costByModel == nil {
		r.costByModel = make(map[string]Cost, 1)
	}
	r.byModel[resp.Model] = r.byModel[resp.Model].Add(u)
	c := r.price(resp.Model, u)
	r.cost = r.cost.Add(c)
	r.costByModel[resp.Model] = r.costByModel[resp.Model].Add(c)
	return u, c
}
