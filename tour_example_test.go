package runlet_test

import (
	"context"
	"fmt"
	"log"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// The examples of the package doc's tour, in its order. Each holds its
// snippet's lines (TestDocTourRuns checks it); a scripted model stands in
// for openai.NewResponses so they run offline.

// Run an agent.
func Example_run() {
	ctx := context.Background()
	model := runlettest.NewModel(runlettest.TextReply("Hello!"))
	agent := &runlet.Agent{Name: "assistant", Instructions: "Be concise.", Model: model}
	rt := runlet.NewRuntime()
	res, err := rt.Run(ctx, agent, "Say hello.")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output)
	// Output: Hello!
}

// Give an agent a tool: a typed Go function whose JSON Schema is inferred
// from its argument type.
func Example_tool() {
	ctx := context.Background()
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_1", "get_weather", `{"city":"Shanghai"}`)),
		runlettest.TextReply("Sunny, 24°C."),
	)
	type WeatherArgs struct {
		City string `json:"city" jsonschema:"the city, e.g. Shanghai"`
	}
	weather := runlet.NewTool("get_weather", "Current weather for a city.",
		func(ctx context.Context, in WeatherArgs) (string, error) {
			return "sunny, 24°C in " + in.City, nil
		})
	agent := &runlet.Agent{Name: "assistant", Model: model, Tools: []runlet.Tool{weather}}
	res, err := runlet.NewRuntime().Run(ctx, agent, "Weather in Shanghai?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output, "after", res.Turns, "turns")
	// Output: Sunny, 24°C. after 2 turns
}

// Stream a run's events as they happen.
func Example_stream() {
	ctx := context.Background()
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_1", "get_weather", `{"city":"Shanghai"}`)),
		runlettest.TextReply("Sunny, 24°C."),
	)
	model.ChunkSize = 4
	agent := &runlet.Agent{Name: "assistant", Model: model, Tools: []runlet.Tool{weather()}}
	rt := runlet.NewRuntime()
	for ev, err := range rt.Stream(ctx, agent, "Weather in Shanghai?") {
		if err != nil {
			log.Fatal(err)
		}
		switch ev := ev.(type) {
		case *runlet.TextDelta:
			fmt.Print(ev.Delta)
		case *runlet.ToolStarted:
			fmt.Println("calling", ev.Call.Name)
		}
	}
	fmt.Println()
	// Output:
	// calling get_weather
	// Sunny, 24°C.
}

// Ask for a typed answer: the schema comes from the type, and the answer
// is validated and decoded.
func Example_typedOutput() {
	ctx := context.Background()
	model := runlettest.NewModel(runlettest.TextReply(`{"name":"Ada Lovelace","email":"ada@example.com"}`))
	agent := &runlet.Agent{Name: "extractor", Model: model}
	rt := runlet.NewRuntime()
	type Contact struct {
		Name  string `json:"name"`
		Email string `json:"email,omitempty"`
	}
	res, err := runlet.RunAs[Contact](ctx, rt, agent, "Ada Lovelace, ada@example.com")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Value.Name, res.Value.Email)
	// Output: Ada Lovelace ada@example.com
}

// Keep a conversation across runs in a session.
func Example_sessions() {
	ctx := context.Background()
	model := runlettest.NewModel(runlettest.TextReply("Hello, Ada."), runlettest.TextReply("You are Ada."))
	agent := &runlet.Agent{Name: "assistant", Model: model}
	rt := runlet.NewRuntime(runlet.WithStore(runlet.NewMemoryStore()))
	_, err := rt.Run(ctx, agent, "My name is Ada.", runlet.WithSession("user-42"))
	if err != nil {
		log.Fatal(err)
	}
	res, err := rt.Run(ctx, agent, "What is my name?", runlet.WithSession("user-42"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output)
	fmt.Println("the second call saw", len(model.Requests()[1].Messages), "messages")
	// Output:
	// You are Ada.
	// the second call saw 3 messages
}

// Several agents: triage hands the conversation to billing, which answers.
// (Agent.AsTool makes an agent another's tool instead.)
func Example_severalAgents() {
	ctx := context.Background()
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("h1", "transfer_to_billing", `{}`)),
		runlettest.TextReply("Your refund is on its way."),
	)
	rt := runlet.NewRuntime()
	billing := &runlet.Agent{Name: "billing", Description: "Refunds and invoices.", Model: model}
	triage := &runlet.Agent{Name: "triage", Model: model, Handoffs: []runlet.Handoff{{Agent: billing}}}
	res, err := rt.Run(ctx, triage, "I want a refund.")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Agent+":", res.Output)
	// Output: billing: Your refund is on its way.
}
