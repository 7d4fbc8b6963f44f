package runlet_test

import (
	"context"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// benchAgents returns a writer whose model calls researcherTool(researcher)
// once and then answers, and a researcher that answers at once: three
// model calls in all.
func benchAgents(researcherTool func(*runlet.Agent) runlet.Tool) *runlet.Agent {
	researcher := &runlet.Agent{Name: "researcher", Model: &runlettest.Model{Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
		return runlettest.TextReply("Sunny, 24°C.")
	}}}
	call := runlettest.ToolCallReply(runlettest.Call("c1", "researcher", `{"input":"Shanghai"}`))
	answer := runlettest.TextReply("Shanghai is sunny today.")
	n := 0
	writer := &runlet.Agent{Name: "writer", Model: &runlettest.Model{Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
		n++
		if n%2 == 1 {
			return call
		}
		return answer
	}}, Tools: []runlet.Tool{researcherTool(researcher)}}
	return writer
}

// BenchmarkAgentTool compares a run whose agent calls another through
// AsTool with the same two runs done by hand (a tool calling Runtime.Run).
func BenchmarkAgentTool(b *testing.B) {
	rt := runlet.NewRuntime()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		tool func(*runlet.Agent) runlet.Tool
	}{
		{"AsTool", func(a *runlet.Agent) runlet.Tool { return a.AsTool() }},
		{"ByHand", func(a *runlet.Agent) runlet.Tool {
			return runlet.NewTool("researcher", "Ask the researcher.", func(ctx context.Context, in struct {
				Input string `json:"input"`
			}) (string, error) {
				res, err := rt.Run(ctx, a, in.Input)
				if err != nil {
					return "", err
				}
				return res.Output, nil
			})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			writer := benchAgents(c.tool)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rt.Run(ctx, writer, "Weather in Shanghai?"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
