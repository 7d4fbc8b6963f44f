// Command multiagent shows several agents in one run: a triage agent hands
// the conversation to a travel specialist, which calls a researcher agent
// as a tool. Every agent's events go to one stream, printed as a tree by
// depth, with the usage and cost of each agent at the end (the cost is
// unknown here: give the runtime a price table with runlet.WithPrices to
// know it).
//
//	go run ./examples/multiagent                 # scripted models, offline
//	OPENAI_API_KEY=sk-... go run ./examples/multiagent -live
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

type cityArgs struct {
	City string `json:"city" jsonschema:"the city"`
}

func main() {
	live := flag.Bool("live", false, "use OpenAI (OPENAI_API_KEY / OPENAI_BASE_URL) instead of scripted models")
	model := flag.String("model", "gpt-4o-mini", "model name with -live")
	flag.Parse()
	question := "I am going to Lisbon next week. What should I pack?"
	var cfg *openai.Config
	if *live {
		cfg = &openai.Config{Model: *model}
	}
	if err := run(context.Background(), cfg, question, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "multiagent:", err)
		os.Exit(1)
	}
}

// agents builds the three agents: on OpenAI's Chat Completions API (or a
// compatible server) configured by cfg, or, with a nil cfg, each with a
// scripted model.
func agents(cfg *openai.Config) *runlet.Agent {
	model := func(replies ...runlettest.Reply) runlet.Model {
		if cfg != nil {
			return openai.NewChatCompletions(*cfg)
		}
		return runlettest.NewModel(replies...)
	}
	forecast := runlet.NewTool("get_forecast", "Next week's weather forecast for a city.",
		func(_ context.Context, in cityArgs) (string, error) {
			return "Lisbon next week: 18-24°C, sunny, one rainy day", nil
		})
	researcher := &runlet.Agent{
		Name:         "researcher",
		Description:  "Finds facts such as weather forecasts; give it one precise question.",
		Instructions: "Answer the question with facts from your tools, in one sentence.",
		Model: model(
			runlettest.ToolCallReply(runlettest.Call("call_r1", "get_forecast", `{"city":"Lisbon"}`)),
			runlettest.TextReply("Lisbon next week: 18-24°C, mostly sunny, one rainy day."),
		),
		Tools: []runlet.Tool{forecast},
	}
	travel := &runlet.Agent{
		Name:         "travel",
		Description:  "Travel advice: packing, itineraries.",
		Instructions: "You give travel advice. Ask the researcher for facts you need.",
		Model: model(
			runlettest.ToolCallReply(runlettest.Call("call_t1", "researcher", `{"input":"Weather forecast for Lisbon next week?"}`)),
			runlettest.TextReply("Pack light layers, sunglasses and a small umbrella: 18-24°C with one rainy day."),
		),
		Tools: []runlet.Tool{researcher.AsTool()},
	}
	return &runlet.Agent{
		Name:         "triage",
		Instructions: "Hand the user to the agent that fits the request.",
		Model: model(
			runlettest.ToolCallReply(runlettest.Call("call_h1", "transfer_to_travel", `{}`)),
		),
		Handoffs: []runlet.Handoff{{Agent: travel}},
	}
}

func run(ctx context.Context, cfg *openai.Config, question string, out io.Writer) error {
	if cfg == nil {
		fmt.Fprintln(out, "(scripted models; pass -live to use OpenAI)")
	}
	triage := agents(cfg)
	for ev, err := range runlet.NewRuntime().Stream(ctx, triage, question) {
		if err != nil {
			return err
		}
		h := ev.Header()
		indent := strings.Repeat("    ", h.Depth)
		switch e := ev.(type) {
		case *runlet.RunStarted:
			fmt.Fprintf(out, "%s%s: %q\n", indent, h.Agent, question)
		case *runlet.AgentStarted:
			fmt.Fprintf(out, "%s└ %s starts: %q\n", indent, h.Agent, e.Input[0].Text())
		case *runlet.ToolFinished:
			fmt.Fprintf(out, "%s  %s → %s: %s\n", indent, h.Agent, e.Call.Name, e.Result.Content)
		case *runlet.HandoffOccurred:
			fmt.Fprintf(out, "%s%s hands off to %s\n", indent, e.From, e.To)
		case *runlet.AgentFinished:
			fmt.Fprintf(out, "%s└ %s answers: %s\n", indent, h.Agent, e.Result.Output)
		case *runlet.RunFinished:
			fmt.Fprintf(out, "%s answers: %s\n", e.Result.Agent, e.Result.Output)
			for _, n := range slices.Sorted(maps.Keys(e.Result.UsageByAgent)) {
				u, c := e.Result.UsageByAgent[n], e.Result.CostByAgent[n]
				cost := fmt.Sprintf("$%.6f", c.Amount)
				if !c.Known() {
					cost = fmt.Sprintf("cost unknown (%d unpriced calls)", c.Unpriced)
				}
				fmt.Fprintf(out, "usage %-10s %d calls, %d tokens, %s\n", n, u.Requests, u.TotalTokens, cost)
			}
		}
	}
	return nil
}
