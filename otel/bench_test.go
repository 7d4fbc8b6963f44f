package otel

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkObserveDelta measures the cost of a streamed delta, the hot path.
func BenchmarkObserveDelta(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	o := NewObserver(WithTracerProvider(tp))
	ctx := context.Background()
	h := runlet.EventHeader{RunID: "r", Time: time.Now()}
	o.Observe(ctx, &runlet.RunStarted{EventHeader: h})
	o.Observe(ctx, &runlet.ModelStarted{EventHeader: h, Request: &runlet.ModelRequest{}})
	ev := &runlet.TextDelta{EventHeader: h, Delta: "hello"}
	b.ReportAllocs()
	for b.Loop() {
		o.Observe(ctx, ev)
	}
}

// BenchmarkRun measures a two-turn streamed run with a tool, with the
// observer recording to the SDK (no-op exporter).
func BenchmarkRun(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	for _, tc := range []struct {
		name string
		opts []runlet.RuntimeOption
	}{
		{"without", nil},
		{"with", []runlet.RuntimeOption{runlet.WithObservers(NewObserver(WithTracerProvider(tp)))}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rt := runlet.NewRuntime(tc.opts...)
			agent := weatherAgent()
			model := agent.Model.(*runlettest.Model)
			b.ReportAllocs()
			for b.Loop() {
				model.Push(
					runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`)),
					runlettest.TextReply("Sunny in Paris."),
				)
				for _, err := range rt.Stream(context.Background(), agent, "hi") {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
