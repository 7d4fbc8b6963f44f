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
