package runlet_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// A writer calls a researcher agent as a tool: one run, one event stream,
// one budget. The events of the researcher are at depth 1, under the tool
// call that ran it.
func ExampleAgent_AsTool() {
	researcher := &runlet.Agent{
		Name:        "researcher",
		Description: "Looks up the weather; give it a city.",
		Model: runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("w1", "get_weather", `{"city":"Shanghai"}`)),
			runlettest.TextReply("Sunny, 24°C."),
		),
		Tools: []runlet.Tool{weather()},
	}
	writer := &runlet.Agent{
		Name: "writer",
		Model: runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("c1", "researcher", `{"input":"Shanghai"}`)),
			runlettest.TextReply("Shanghai: a sunny 24°C today."),
		),
		Tools: []runlet.Tool{researcher.AsTool()},
	}
	for ev, err := range runlet.NewRuntime().Stream(context.Background(), writer, "Write about Shanghai's weather.") {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		h := ev.Header()
		indent := strings.Repeat("  ", h.Depth)
		switch e := ev.(type) {
		case *runlet.ToolStarted:
			fmt.Printf("%s%s calls %s\n", indent, h.Agent, e.Call.Name)
		case *runlet.AgentFinished:
			fmt.Printf("%s%s answers %q\n", indent, h.Agent, e.Result.Output)
		case *runlet.RunFinished:
			fmt.Printf("%s answers %q\n", h.Agent, e.Result.Output)
			fmt.Println("model calls by agent:", e.Result.UsageByAgent["writer"].Requests, e.Result.UsageByAgent["researcher"].Requests)
		}
	}
	// Output:
	// writer calls researcher
	//   researcher calls get_weather
	//   researcher answers "Sunny, 24°C."
	// writer answers "Shanghai: a sunny 24°C today."
	// model calls by agent: 2 2
}

// A triage agent hands the conversation to billing, whose model answers
// with billing's instructions and tools.
func ExampleHandoff() {
	billing := &runlet.Agent{
		Name:        "billing",
		Description: "Refunds and invoices.",
		Model:       runlettest.NewModel(runlettest.TextReply("Your refund is on its way.")),
	}
	triage := &runlet.Agent{
		Name: "triage",
		Model: runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("h1", "transfer_to_billing", `{}`)),
		),
		Handoffs: []runlet.Handoff{{Agent: billing}},
	}
	for ev, err := range runlet.NewRuntime().Stream(context.Background(), triage, "I want a refund.") {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch e := ev.(type) {
		case *runlet.HandoffOccurred:
			fmt.Println(e.From, "→", e.To)
		case *runlet.RunFinished:
			fmt.Printf("%s: %s\n", e.Result.Agent, e.Result.Output)
		}
	}
	// Output:
	// triage → billing
	// billing: Your refund is on its way.
}
