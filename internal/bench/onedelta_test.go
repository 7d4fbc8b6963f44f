package bench_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// The streamed tool run with the 4,000-byte answer in one delta: where a
// per-stream buffer, not per-delta work, is most of what a run allocates.
//
//	go test -run '^$' -bench OneDelta -benchmem -count 6 ./internal/bench

func oneDeltaServer(b *testing.B) *runlettest.OpenAIChatServer {
	srv := runlettest.NewOpenAIChatServer()
	answer := strings.Repeat("sun ", e2eAnswerDeltas)
	srv.SetResponder(func(r runlettest.WireRequest) runlettest.OpenAIChatReply {
		if bytes.Contains(r.Body, []byte(`"role":"tool"`)) {
			return runlettest.OpenAIChatReply{Text: answer, Deltas: 1,
				Usage: &runlettest.OpenAIChatUsage{PromptTokens: 40, CompletionTokens: 1000}}
		}
		return runlettest.OpenAIChatReply{
			ToolCalls: []runlettest.OpenAIChatToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Shanghai"}`}},
			Usage:     &runlettest.OpenAIChatUsage{PromptTokens: 30, CompletionTokens: 10},
		}
	})
	b.Cleanup(srv.Close)
	return srv
}

func BenchmarkE2EOneDeltaRunletStream(b *testing.B) {
	srv := oneDeltaServer(b)
	agent, rt := runletAgent(srv), runlet.NewRuntime()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		n := 0
		for ev, err := range rt.Stream(context.Background(), agent, "Weather in Shanghai?") {
			if err != nil {
				b.Fatal(err)
			}
			if d, ok := ev.(*runlet.TextDelta); ok {
				n += len(d.Delta)
			}
		}
		if n != 4*e2eAnswerDeltas {
			b.Fatalf("%d bytes of text", n)
		}
	}
}

func BenchmarkE2EOneDeltaHandWrittenStream(b *testing.B) {
	srv := oneDeltaServer(b)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		out, err := handLoop(srv.BaseURL(), true)
		if err != nil || len(out) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(out))
		}
	}
}
