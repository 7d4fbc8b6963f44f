package otel_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/otel"
	"github.com/runlet/runlet/runlettest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func Example() {
	// In a program: an OTLP exporter and the global providers. Here: an
	// in-memory exporter, so the example can print what was recorded.
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer tp.Shutdown(context.Background())

	rt := runlet.NewRuntime(runlet.WithObservers(
		otel.NewObserver(otel.WithTracerProvider(tp), otel.WithProviderName("openai")),
	))
	type weatherIn struct {
		City string `json:"city"`
	}
	weather := runlet.NewTool("get_weather", "Weather in a city.", func(ctx context.Context, in weatherIn) (string, error) {
		return "sunny in " + in.City, nil
	})
	agent := &runlet.Agent{
		Name: "assistant",
		Model: runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
			runlettest.TextReply("It is sunny in Paris."),
		),
		Tools:   []runlet.Tool{weather},
		Options: map[string]any{"model": "gpt-4o-mini"},
	}

	// The run span becomes a child of the span in ctx, if any.
	ctx, span := tp.Tracer("app").Start(context.Background(), "POST /ask")
	if _, err := rt.Run(ctx, agent, "Weather in Paris?"); err != nil {
		fmt.Println(err)
	}
	span.End()

	printTree(exporter.GetSpans(), trace.SpanID{}, "")
	// Output:
	// POST /ask
	//   invoke_agent assistant
	//     chat gpt-4o-mini
	//     execute_tool get_weather
	//     chat gpt-4o-mini
}

// printTree prints the children of parent in start order, then theirs.
func printTree(spans tracetest.SpanStubs, parent trace.SpanID, indent string) {
	var children tracetest.SpanStubs
	for _, s := range spans {
		if s.Parent.SpanID() == parent {
			children = append(children, s)
		}
	}
	slices.SortStableFunc(children, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	for _, s := range children {
		fmt.Println(indent + s.Name)
		printTree(spans, s.SpanContext.SpanID(), indent+"  ")
	}
}
