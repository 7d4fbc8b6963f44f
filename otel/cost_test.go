package otel

import (
	"context"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A priced call's chat span carries its cost; an unpriced one carries none
// (unknown is not zero); the run span says how much was priced and how
// many calls were not; the cost counter adds up the priced calls.
func TestCost(t *testing.T) {
	h := newHarness(t, WithCurrency("EUR"))
	first := runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`))
	first.Response.Model = "priced-2025-01-01" // dated, as providers report it
	first.Response.Usage = runlet.Usage{InputTokens: 1_000_000, CachedInputTokens: 500_000, OutputTokens: 100_000}
	second := runlettest.TextReply("Sunny in Paris.")
	second.Response.Model = "unpriced"
	rt := h.runtime(runlet.WithPrices(runlet.Prices{"priced": {Input: 2, CachedInput: 0.5, Output: 10}}))
	if err := run(context.Background(), rt, weatherAgent(first, second), "Weather in Paris?", false); err != nil {
		t.Fatal(err)
	}
	spans := h.spans.GetSpans()
	chat1, chat2, root := spans[0], spans[2], h.span(t, "invoke_agent assistant")
	const want = 1 + 0.25 + 1 // 500k plain at 2, 500k cached at 0.5, 100k out at 10
	wantAttrs(t, chat1, map[string]string{
		"gen_ai.usage.cost.amount":   "2.25",
		"gen_ai.usage.cost.currency": "EUR",
		"gen_ai.usage.cost.source":   "local",
	})
	for _, k := range []string{"gen_ai.usage.cost.amount", "gen_ai.usage.cost.currency"} {
		if v, ok := attrs(chat2.Attributes)[k]; ok {
			t.Errorf("unpriced call has %s = %s", k, v)
		}
		if _, ok := attrs(root.Attributes)[k]; ok {
			t.Errorf("run span has %s: the chat spans already count it", k)
		}
	}
	wantAttrs(t, root, map[string]string{"runlet.run.cost": "2.25", "runlet.run.cost.unpriced": "1"})

	sum, ok := h.metrics(t)["runlet.gen_ai.client.cost"].(metricdata.Sum[float64])
	if !ok || len(sum.DataPoints) != 1 || sum.DataPoints[0].Value != want || !sum.IsMonotonic {
		t.Fatalf("cost counter %+v", sum)
	}
	if m, _ := sum.DataPoints[0].Attributes.Value("gen_ai.response.model"); m.AsString() != "priced-2025-01-01" {
		t.Errorf("cost data point attributes %v", sum.DataPoints[0].Attributes.ToSlice())
	}
}

// The run span splits the run's cost by agent: one runlet.agent.cost event
// per agent, the agent called as a tool priced, the run's own agent
// unpriced, summing to the run's cost.
func TestCostByAgent(t *testing.T) {
	h := newHarness(t)
	small := runlettest.TextReply("facts")
	small.Response.Model, small.Response.Usage = "small", runlet.Usage{InputTokens: 1_000_000}
	researcher := &runlet.Agent{Name: "researcher", Model: runlettest.NewModel(small)}
	writer := &runlet.Agent{Name: "writer", Model: runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "researcher", `{"input":"dig"}`)),
		runlettest.TextReply("essay"),
	), Tools: []runlet.Tool{researcher.AsTool()}}
	rt := h.runtime(runlet.WithPrices(runlet.Prices{"small": {Input: 2}}))
	if _, err := rt.Run(context.Background(), writer, "write"); err != nil {
		t.Fatal(err)
	}
	root := h.span(t, "invoke_agent writer")
	wantAttrs(t, root, map[string]string{"runlet.run.cost": "2", "runlet.run.cost.unpriced": "2"})
	got := map[string]map[string]string{}
	for _, ev := range root.Events {
		if ev.Name == "runlet.agent.cost" {
			a := attrs(ev.Attributes)
			got[a["gen_ai.agent.name"]] = a
		}
	}
	want := map[string]map[string]string{
		"researcher": {"gen_ai.agent.name": "researcher", "runlet.agent.cost": "2", "gen_ai.usage.input_tokens": "1000000", "gen_ai.usage.output_tokens": "0"},
		"writer":     {"gen_ai.agent.name": "writer", "runlet.agent.cost": "0", "runlet.agent.cost.unpriced": "2", "gen_ai.usage.input_tokens": "20", "gen_ai.usage.output_tokens": "10"},
	}
	if len(got) != len(want) {
		t.Fatalf("agent cost events %v", got)
	}
	for name, w := range want {
		for k, v := range w {
			if got[name][k] != v {
				t.Errorf("%s: %s = %q, want %q (%v)", name, k, got[name][k], v, got[name])
			}
		}
		if len(got[name]) != len(w) {
			t.Errorf("%s: attributes %v, want %v", name, got[name], w)
		}
	}
}
