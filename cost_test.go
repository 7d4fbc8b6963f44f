package runlet_test

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// as sets the model name and usage a scripted reply reports.
func as(r runlettest.Reply, model string, u runlet.Usage) runlettest.Reply {
	r.Response.Model = model
	r.Response.Usage = u
	return r
}

func TestPriceCost(t *testing.T) {
	p := runlet.Price{Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15}
	for _, tc := range []struct {
		name string
		p    runlet.Price
		u    runlet.Usage
		want float64
	}{
		{"plain", p, runlet.Usage{InputTokens: 1_000_000, OutputTokens: 1000}, 3 + 0.015},
		// 100 plain + 800 read + 100 written, all inside InputTokens.
		{"cache read and write", p, runlet.Usage{InputTokens: 1000, CachedInputTokens: 800, CacheWriteTokens: 100, OutputTokens: 10},
			(100*3 + 800*0.3 + 100*3.75 + 10*15) / 1e6},
		{"no cache prices: cached tokens at the input price", runlet.Price{Input: 2, Output: 8},
			runlet.Usage{InputTokens: 1000, CachedInputTokens: 800, CacheWriteTokens: 100, OutputTokens: 10}, (1000*2 + 10*8) / 1e6},
		{"inconsistent usage never goes negative", p, runlet.Usage{InputTokens: 10, CachedInputTokens: 20}, 20 * 0.3 / 1e6},
		{"reasoning is output", p, runlet.Usage{OutputTokens: 100, ReasoningTokens: 90}, 100 * 15 / 1e6},
	} {
		if got := tc.p.Cost(tc.u); !near(got, tc.want) {
			t.Errorf("%s: cost %v, want %v", tc.name, got, tc.want)
		}
	}
	long := runlet.Price{Input: 1.25, Output: 10, LongContextAbove: 200_000, LongContext: &runlet.Price{Input: 2.5, Output: 15}}
	if got := long.Cost(runlet.Usage{InputTokens: 200_000, OutputTokens: 1000}); !near(got, (200_000*1.25+1000*10)/1e6) {
		t.Errorf("at the threshold: %v", got)
	}
	if got := long.Cost(runlet.Usage{InputTokens: 200_001, OutputTokens: 1000}); !near(got, (200_001*2.5+1000*15)/1e6) {
		t.Errorf("above the threshold: %v", got)
	}
}

func TestPricesLookup(t *testing.T) {
	prices := runlet.Prices{
		"gpt-4o":            {Input: 2.5, Output: 10},
		"claude-sonnet-4-5": {Input: 3, Output: 15},
		"o3-2025-04-16":     {Input: 9, Output: 9}, // an exact entry wins
		"o3":                {Input: 2, Output: 8},
	}
	for model, want := range map[string]float64{
		"gpt-4o":                     2.5,
		"gpt-4o-2024-08-06":          2.5,
		"claude-sonnet-4-5-20250929": 3,
		"o3-2025-04-16":              9,
		"o3-2025-06-10":              2,
	} {
		if p, ok := prices.Price(model); !ok || p.Input != want {
			t.Errorf("%s: %+v %v, want input %v", model, p, ok, want)
		}
	}
	for _, model := range []string{"gpt-4o-mini", "gpt-4o-mini-2024-07-18", "gpt-4", "", "claude-sonnet-4-5-2025", "gpt-4o-2024-08-0x"} {
		if p, ok := prices.Price(model); ok {
			t.Errorf("%s priced %+v: a price must never be guessed", model, p)
		}
	}
}

// A run prices every call by the model that answered it; an unknown
// model's cost is unknown, not zero, and the run says its cost is
// incomplete.
func TestRunCost(t *testing.T) {
	prices := runlet.Prices{"known": {Input: 2, CachedInput: 0.5, Output: 8}}
	u1 := runlet.Usage{InputTokens: 1000, CachedInputTokens: 600, OutputTokens: 100}
	u2 := runlet.Usage{InputTokens: 2000, OutputTokens: 50}
	c1 := (400*2 + 600*0.5 + 100*8) / 1e6
	newModel := func() *runlettest.Model {
		return runlettest.NewModel(
			as(runlettest.ToolCallReply(runlettest.Call("w", "get_weather", `{"city":"Rome"}`)), "known", u1),
			as(runlettest.TextReply("Sunny."), "unknown", u2))
	}
	t.Run("known and unknown", func(t *testing.T) {
		agent := &runlet.Agent{Model: newModel(), Tools: []runlet.Tool{weatherTool()}}
		evs, err := collect(t, runlet.NewRuntime(runlet.WithPrices(prices)).Stream(context.Background(), agent, "weather?"))
		if err != nil {
			t.Fatal(err)
		}
		var costs []runlet.Cost
		for _, ev := range evs {
			if mf, ok := ev.(*runlet.ModelFinished); ok {
				costs = append(costs, mf.Cost)
			}
		}
		if len(costs) != 2 || !near(costs[0].Amount, c1) || !costs[0].Known() || costs[1] != (runlet.Cost{Unpriced: 1}) || costs[1].Known() {
			t.Fatalf("call costs %+v", costs)
		}
		res := evs[len(evs)-1].(*runlet.RunFinished).Result
		if !near(res.Cost.Amount, c1) || res.Cost.Unpriced != 1 || res.Cost.Known() {
			t.Fatalf("run cost %+v", res.Cost)
		}
		if res.UsageByModel["known"] != u1.Add(runlet.Usage{TotalTokens: 1100, Requests: 1}) ||
			res.UsageByModel["unknown"].InputTokens != 2000 || len(res.UsageByModel) != 2 {
			t.Fatalf("usage by model %+v", res.UsageByModel)
		}
		if !near(res.CostByModel["known"].Amount, c1) || res.CostByModel["unknown"] != (runlet.Cost{Unpriced: 1}) {
			t.Fatalf("cost by model %+v", res.CostByModel)
		}
		// The event and the result marshal their costs.
		b, _ := json.Marshal(res)
		var back runlet.Result
		if err := json.Unmarshal(b, &back); err != nil || back.Cost != res.Cost || back.CostByModel["unknown"] != res.CostByModel["unknown"] {
			t.Fatalf("JSON round trip: %s %v", b, err)
		}
	})
	t.Run("a run option replaces the runtime's table", func(t *testing.T) {
		agent := &runlet.Agent{Model: newModel(), Tools: []runlet.Tool{weatherTool()}}
		res, err := runlet.NewRuntime(runlet.WithPrices(runlet.Prices{})).Run(context.Background(), agent, "weather?",
			runlet.WithPrices(runlet.Prices{"known": {Input: 1}, "unknown": {Output: 1}}))
		if err != nil || !res.Cost.Known() || !near(res.Cost.Amount, (1000+50)/1e6) {
			t.Fatalf("cost %+v err %v", res.Cost, err)
		}
	})
	t.Run("no price table: every call unpriced", func(t *testing.T) {
		agent := &runlet.Agent{Model: newModel(), Tools: []runlet.Tool{weatherTool()}}
		res, err := runlet.NewRuntime().Run(context.Background(), agent, "weather?")
		if err != nil || res.Cost != (runlet.Cost{Unpriced: 2}) {
			t.Fatalf("cost %+v err %v", res.Cost, err)
		}
	})
}

// A run that fell back from one provider to another is priced by the
// model that answered each call, streamed or not.
func TestFallbackCost(t *testing.T) {
	overloaded := &runlet.ProviderError{Provider: "a", StatusCode: 529, Message: "overloaded", Retryable: true}
	prices := runlet.Prices{"model-a": {Input: 10, Output: 10}, "model-b": {Input: 1, Output: 1}}
	u := runlet.Usage{InputTokens: 1000, OutputTokens: 100}
	for _, stream := range []bool{false, true} {
		a := runlettest.NewModel(
			runlettest.ErrorReply(overloaded), // the first call falls back to b
			as(runlettest.TextReply("from a"), "model-a", u))
		b := runlettest.NewModel(as(runlettest.ToolCallReply(runlettest.Call("w", "get_weather", `{"city":"Rome"}`)), "model-b", u))
		agent := &runlet.Agent{Model: runlet.Fallback(a, b), Tools: []runlet.Tool{weatherTool()}}
		rt := runlet.NewRuntime(runlet.WithPrices(prices))
		var res *runlet.Result
		var err error
		if stream {
			var evs []runlet.Event
			evs, err = collect(t, rt.Stream(context.Background(), agent, "weather?"))
			res = evs[len(evs)-1].(*runlet.RunFinished).Result
		} else {
			res, err = rt.Run(context.Background(), agent, "weather?")
		}
		if err != nil || res.Output != "from a" {
			t.Fatalf("stream=%v: res=%+v err=%v", stream, res, err)
		}
		if res.UsageByModel["model-a"].Requests != 1 || res.UsageByModel["model-b"].Requests != 1 || len(res.UsageByModel) != 2 {
			t.Fatalf("stream=%v: usage by model %+v", stream, res.UsageByModel)
		}
		if want := 1100*10/1e6 + 1100*1/1e6; !near(res.Cost.Amount, want) || !res.Cost.Known() {
			t.Fatalf("stream=%v: cost %+v, want %v", stream, res.Cost, want)
		}
		if !near(res.CostByModel["model-b"].Amount, 1100/1e6) {
			t.Fatalf("stream=%v: cost by model %+v", stream, res.CostByModel)
		}
	}
}

// A resumed run goes on from the cost and usage by model it had, whatever
// the resuming Runtime's price table says about the calls before.
func TestResumeKeepsCost(t *testing.T) {
	u := runlet.Usage{InputTokens: 1000, OutputTokens: 100}
	store, _, agent := interruptible(
		as(runlettest.ToolCallReply(runlettest.Call("d", "delete_file", `{"path":"/x"}`)), "first", u),
		as(runlettest.TextReply("Done."), "second", u))
	ctx := context.Background()
	res, err := runlet.NewRuntime(runlet.WithStore(store), runlet.WithPrices(runlet.Prices{"first": {Input: 1, Output: 1}})).
		Run(ctx, agent, "go")
	if err != nil || res.Status != runlet.StateInterrupted || !near(res.Cost.Amount, 1100/1e6) {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	res, err = runlet.NewRuntime(runlet.WithStore(store), runlet.WithPrices(runlet.Prices{"second": {Input: 2, Output: 2}})).
		Resume(ctx, agent, res.RunID, runlet.Approve("d"))
	if err != nil || res.Output != "Done." {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if !near(res.Cost.Amount, 1100/1e6+2200/1e6) || !res.Cost.Known() || !near(res.CostByModel["first"].Amount, 1100/1e6) {
		t.Fatalf("resumed cost %+v by model %+v", res.Cost, res.CostByModel)
	}
	if res.UsageByModel["first"].Requests != 1 || res.UsageByModel["second"].Requests != 1 {
		t.Fatalf("usage by model %+v", res.UsageByModel)
	}
}

// A checkpoint from before costs were recorded resumes with its calls
// unpriced: their cost is unknown, so the run's is incomplete.
func TestResumeCheckpointWithoutCost(t *testing.T) {
	ctx := context.Background()
	store, _, agent := interruptible(as(runlettest.TextReply("Done."), "m", runlet.Usage{InputTokens: 1000}))
	saveOldCheckpoint(t, store)
	res, err := runlet.NewRuntime(runlet.WithStore(store), runlet.WithPrices(runlet.Prices{"m": {Input: 1}})).
		Resume(ctx, agent, "old", runlet.Approve("d"))
	if err != nil || res.Cost.Unpriced != 1 || !near(res.Cost.Amount, 1000/1e6) || res.UsageByModel[""].Requests != 1 {
		t.Fatalf("res=%+v err=%v", res, err)
	}
}

// Calls a preparer makes through CallModel are priced too.
func TestCallModelCost(t *testing.T) {
	helper := runlettest.NewModel(as(runlettest.TextReply("summary"), "cheap", runlet.Usage{InputTokens: 1_000_000}))
	prep := runlet.PreparerFunc(func(ctx context.Context, req *runlet.ModelRequest) error {
		_, err := runlet.CallModel(ctx, "summarize", helper, &runlet.ModelRequest{})
		return err
	})
	model := runlettest.NewModel(as(runlettest.TextReply("ok"), "main", runlet.Usage{InputTokens: 1_000_000}))
	res, err := runlet.NewRuntime(runlet.WithPreparers(prep), runlet.WithPrices(runlet.Prices{"cheap": {Input: 0.1}, "main": {Input: 1}})).
		Run(context.Background(), &runlet.Agent{Model: model}, "hi")
	if err != nil || !near(res.Cost.Amount, 1.1) || !near(res.CostByModel["cheap"].Amount, 0.1) {
		t.Fatalf("cost %+v by model %+v err %v", res.Cost, res.CostByModel, err)
	}
}

// An agent called as a tool is priced with the calling run's table, and
// its calls add to the run's cost under the model that answered them.
func TestAgentToolCost(t *testing.T) {
	u := runlet.Usage{InputTokens: 1000, OutputTokens: 100}
	researcher := &runlet.Agent{
		Name:  "researcher",
		Model: runlettest.NewModel(as(runlettest.TextReply("Sunny."), "small", u)),
	}
	writer := &runlet.Agent{
		Name: "writer",
		Model: runlettest.NewModel(
			as(runlettest.ToolCallReply(runlettest.Call("c1", "researcher", `{"input":"Rome"}`)), "big", u),
			as(runlettest.TextReply("Rome is sunny."), "big", u)),
		Tools: []runlet.Tool{researcher.AsTool()},
	}
	prices := runlet.Prices{"big": {Input: 10, Output: 10}, "small": {Input: 1, Output: 1}}
	evs, err := collect(t, runlet.NewRuntime(runlet.WithPrices(prices)).Stream(context.Background(), writer, "weather?"))
	if err != nil {
		t.Fatal(err)
	}
	var sub runlet.Cost
	for _, ev := range evs {
		if mf, ok := ev.(*runlet.ModelFinished); ok && mf.Header().Agent == "researcher" {
			sub = sub.Add(mf.Cost)
		}
	}
	if !near(sub.Amount, 1100/1e6) || !sub.Known() {
		t.Fatalf("sub-agent call cost %+v", sub)
	}
	res := evs[len(evs)-1].(*runlet.RunFinished).Result
	if !near(res.Cost.Amount, 2*11000/1e6+1100/1e6) || !res.Cost.Known() ||
		!near(res.CostByModel["small"].Amount, 1100/1e6) || res.UsageByModel["big"].Requests != 2 {
		t.Fatalf("run cost %+v by model %+v usage %+v", res.Cost, res.CostByModel, res.UsageByModel)
	}
}

// Result.CostByAgent splits the run's cost by the agent that made each
// call, as UsageByAgent splits its usage: the agent the run started with,
// the agent it handed off to and the agents called as tools, priced or not,
// summing to Cost. An interruption keeps the split in the checkpoint, so
// the resumed run goes on adding to it.
func TestCostByAgent(t *testing.T) {
	u := runlet.Usage{InputTokens: 1000, OutputTokens: 100}
	researcher := &runlet.Agent{Name: "researcher", Model: runlettest.NewModel(as(runlettest.TextReply("Sunny."), "small", u))}
	clerk := &runlet.Agent{Name: "clerk", Model: runlettest.NewModel(as(runlettest.TextReply("Filed."), "unlisted", u))}
	var deleted []string
	var mu sync.Mutex
	billing := approvalAgent(runlettest.NewModel(
		as(runlettest.ToolCallReply(
			runlettest.Call("r", "researcher", `{"input":"Rome"}`),
			runlettest.Call("c", "clerk", `{"input":"file it"}`)), "big", u),
		as(runlettest.ToolCallReply(runlettest.Call("d", "delete_file", `{"path":"/x"}`)), "big", u),
		as(runlettest.TextReply("Done."), "big", u)), &deleted, &mu)
	billing.Name = "billing"
	billing.Tools = append(billing.Tools, researcher.AsTool(), clerk.AsTool())
	triage := &runlet.Agent{Name: "triage", Model: runlettest.NewModel(
		as(runlettest.ToolCallReply(runlettest.Call("h", "transfer_to_billing", `{}`)), "small", u)),
		Handoffs: []runlet.Handoff{{Agent: billing}}}
	prices := runlet.Prices{"big": {Input: 10, Output: 10}, "small": {Input: 1, Output: 1}}
	store := runlet.NewMemoryStore()
	rt := runlet.NewRuntime(runlet.WithStore(store), runlet.WithPrices(prices))
	ctx := context.Background()

	res, err := rt.Run(ctx, triage, "refund me")
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	res, err = rt.Resume(ctx, billing, res.RunID, runlet.Approve("d"))
	if err != nil || res.Output != "Done." {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	small, big := 1100/1e6, 11000/1e6
	want := map[string]runlet.Cost{
		"triage":     {Amount: small},
		"billing":    {Amount: 3 * big},
		"researcher": {Amount: small},
		"clerk":      {Unpriced: 1},
	}
	if len(res.CostByAgent) != len(want) {
		t.Fatalf("cost by agent %+v, want %+v", res.CostByAgent, want)
	}
	var sum runlet.Cost
	for name, c := range res.CostByAgent {
		if w := want[name]; !near(c.Amount, w.Amount) || c.Unpriced != w.Unpriced {
			t.Errorf("%s cost %+v, want %+v", name, c, w)
		}
		if c.Unpriced+res.UsageByAgent[name].Requests == 0 {
			t.Errorf("%s has a cost but no usage", name)
		}
		sum = sum.Add(c)
	}
	if !near(sum.Amount, res.Cost.Amount) || sum.Unpriced != res.Cost.Unpriced || res.Cost.Unpriced != 1 {
		t.Fatalf("cost by agent sums to %+v, cost %+v", sum, res.Cost)
	}
	b, _ := json.Marshal(res)
	var back runlet.Result
	if err := json.Unmarshal(b, &back); err != nil || back.CostByAgent["clerk"] != want["clerk"] {
		t.Fatalf("round trip: %+v %v", back.CostByAgent, err)
	}
}
