package openai_test

import (
	"context"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// An agent on the Chat Completions API. The server here is a fake on
// loopback; against OpenAI, leave BaseURL and APIKey empty and set
// OPENAI_API_KEY.
func ExampleNewChatCompletions() {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Hello! How can I help?"})
	defer srv.Close()

	model := openai.NewChatCompletions(openai.Config{
		Model:   "gpt-4o-mini",
		BaseURL: srv.BaseURL(), // empty: $OPENAI_BASE_URL, else https://api.openai.com/v1
		APIKey:  "sk-example",  // empty: $OPENAI_API_KEY
	})
	agent := &runlet.Agent{Name: "greeter", Instructions: "Be brief.", Model: model}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "Hi")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output)
	// Output: Hello! How can I help?
}

// The Responses API, with a tool: the adapter sends the tool's schema, the
// runtime runs the call the model asks for and sends back its result.
func ExampleNewResponses() {
	srv := runlettest.NewOpenAIResponsesServer(
		runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{
			runlettest.ResponsesFunctionCall("get_time", `{"city":"Tokyo"}`),
		}},
		runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("It is 9:00 in Tokyo.")}},
	)
	defer srv.Close()

	type timeArgs struct {
		City string `json:"city" jsonschema:"the city"`
	}
	getTime := runlet.NewTool("get_time", "Returns the local time in a city.",
		func(_ context.Context, in timeArgs) (string, error) { return "09:00 in " + in.City, nil })
	model := openai.NewResponses(openai.Config{Model: "gpt-4o-mini", BaseURL: srv.BaseURL(), APIKey: "sk-example"})
	agent := &runlet.Agent{Name: "clock", Model: model, Tools: []runlet.Tool{getTime}}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "What time is it in Tokyo?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output)
	// Output: It is 9:00 in Tokyo.
}

// An OpenAI-compatible server through a preset: Ollama on its default
// port, no key needed.
func ExamplePreset_Config() {
	cfg := openai.Ollama.Config("llama3.2")
	fmt.Println(cfg.Name, cfg.BaseURL, cfg.Model)
	model := openai.NewChatCompletions(cfg)
	_ = model // give it to a runlet.Agent
	// Output: ollama http://localhost:11434/v1 llama3.2
}
