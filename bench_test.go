package runlet_test

import (
	"context"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// benchAgent scripts a two-call tool run: one tool call, then the answer.
func benchAgent(chunk int) *runlet.Agent {
	call := runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Shanghai"}`))
	answer := runlettest.TextReply("It is sunny in Shanghai today, with a light breeze from the east.")
	model := runlettest.NewModel()
	model.ChunkSize = chunk
	n := 0
	model.Func = func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		n++
		if n%2 == 1 {
			return call
		}
		return answer
	}
	return &runlet.Agent{Name: "bench", Instructions: "Be brief.", Model: model, Tools: []runlet.Tool{weatherTool()}}
}

// BenchmarkRunToolLoop measures the runtime's own cost for a two-call tool
// run (the fake model does almost nothing): report per run; per turn is half.
func BenchmarkRunToolLoop(b *testing.B) {
	rt := runlet.NewRuntime()
	agent := benchAgent(0)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Run(ctx, agent, "Weather in Shanghai?"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamToolLoop is the same run streamed, the answer in 4-rune deltas.
func BenchmarkStreamToolLoop(b *testing.B) { benchStream(b, runlet.NewRuntime()) }

func benchStream(b *testing.B, rt *runlet.Runtime) {
	agent := benchAgent(4)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range rt.Stream(ctx, agent, "Weather in Shanghai?") {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkStreamToolLoopObserved is BenchmarkStreamToolLoop with one
// observer that does nothing: the cost of handing observers their own copy
// of each event.
func BenchmarkStreamToolLoopObserved(b *testing.B) {
	benchStream(b, runlet.NewRuntime(runlet.WithObservers(runlet.ObserverFunc(func(context.Context, runlet.Event) {}))))
}

// The runtime's own allocations for the benchmarks' two-call tool run, the
// scripted model's included (it allocates little): measured with go test -v
// -run ToolLoopAllocs . (Go 1.26, linux/amd64) 35 non-streamed and 113
// streamed (69 and 146 before the run loop kept its state in one
// allocation, ran a lone call without a worker and reused its buffers; 33
// and 111 before Result.CostByAgent, whose map is the 2 more).
const (
	maxRunToolLoopAllocs    = 35
	maxStreamToolLoopAllocs = 113
)

func TestToolLoopAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	rt := runlet.NewRuntime()
	ctx := context.Background()
	run := benchAgent(0)
	got := testing.AllocsPerRun(100, func() {
		if _, err := rt.Run(ctx, run, "Weather in Shanghai?"); err != nil {
			t.Fatal(err)
		}
	})
	stream := benchAgent(4)
	gotStream := testing.AllocsPerRun(100, func() {
		for _, err := range rt.Stream(ctx, stream, "Weather in Shanghai?") {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Logf("two-call tool run: %.0f allocations, streamed %.0f", got, gotStream)
	if got > maxRunToolLoopAllocs {
		t.Errorf("%.0f allocations per run, want at most %d", got, maxRunToolLoopAllocs)
	}
	if gotStream > maxStreamToolLoopAllocs {
		t.Errorf("%.0f allocations per streamed run, want at most %d", gotStream, maxStreamToolLoopAllocs)
	}
}
