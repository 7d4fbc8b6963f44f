package runlet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// A scripted model stands in for a provider so the examples run offline;
// in an application it is openai.NewChatCompletions(...) or similar.
func exampleModel() *runlettest.Model {
	return runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_1", "get_weather", `{"city":"Shanghai"}`)),
		runlettest.TextReply("It is sunny in Shanghai, 24°C."),
	)
}

type WeatherArgs struct {
	City string `json:"city" jsonschema:"the city, e.g. Shanghai"`
}

func weather() runlet.Tool {
	return runlet.NewTool("get_weather", "Current weather for a city.",
		func(ctx context.Context, in WeatherArgs) (string, error) {
			return "sunny, 24°C in " + in.City, nil
		})
}

func ExampleRuntime_Run() {
	agent := &runlet.Agent{
		Name:         "assistant",
		Instructions: "Be concise and helpful.",
		Model:        exampleModel(),
		Tools:        []runlet.Tool{weather()},
	}
	rt := runlet.NewRuntime()
	res, err := rt.Run(context.Background(), agent, "Weather in Shanghai?")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Output)
	fmt.Println("turns:", res.Turns, "status:", res.Status)
	// Output:
	// It is sunny in Shanghai, 24°C.
	// turns: 2 status: finished
}

func ExampleRuntime_Stream() {
	model := exampleModel()
	model.ChunkSize = 8 // stream the answer in 8-rune deltas
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{weather()}}

	for ev, err := range runlet.NewRuntime().Stream(context.Background(), agent, "Weather in Shanghai?") {
		if err != nil {
			fmt.Println("\nerror:", err)
			return
		}
		switch ev := ev.(type) {
		case *runlet.TextDelta:
			fmt.Print(ev.Delta)
		case *runlet.ToolStarted:
			fmt.Printf("→ %s %s\n", ev.Call.Name, ev.Call.Arguments)
		case *runlet.ToolFinished:
			fmt.Printf("← %s\n", ev.Result.Content)
		case *runlet.RunFinished:
			fmt.Printf("\n[%d turns, %d tokens]\n", ev.Result.Turns, ev.Result.Usage.TotalTokens)
		}
	}
	// Output:
	// → get_weather {"city":"Shanghai"}
	// ← sunny, 24°C in Shanghai
	// It is sunny in Shanghai, 24°C.
	// [2 turns, 30 tokens]
}

func ExampleNewTool() {
	type Args struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := runlet.NewTool("add", "Adds two integers.", func(ctx context.Context, in Args) (int, error) {
		return in.A + in.B, nil
	})
	schema, _ := json.Marshal(add.Spec().InputSchema)
	fmt.Println(string(schema))

	out, err := add.Call(context.Background(), json.RawMessage(`{"a":2,"b":3}`))
	fmt.Println(out, err)

	// Arguments are validated against the schema before the function runs.
	_, err = add.Call(context.Background(), json.RawMessage(`{"a":"two","b":3}`))
	fmt.Println(err != nil)
	// Output:
	// {"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}
	// 5 <nil>
	// true
}

func ExampleHooks() {
	guard := runlet.Hooks{
		BeforeModelCall: func(ctx context.Context, req *runlet.ModelRequest) error {
			req.Instructions += "\nAnswer in English."
			return nil
		},
		BeforeToolCall: func(ctx context.Context, call *runlet.ToolCallPart) (*runlet.ToolResultPart, error) {
			if strings.Contains(string(call.Arguments), "Shanghai") {
				return &runlet.ToolResultPart{Content: "cached: sunny"}, nil // short-circuit
			}
			return nil, runlet.Deny("only Shanghai is supported")
		},
	}
	model := exampleModel()
	rt := runlet.NewRuntime(runlet.WithHooks(guard))
	res, _ := rt.Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{weather()}}, "Weather?")
	fmt.Println(res.Messages[2].Parts[0].(runlet.ToolResultPart).Content)
	fmt.Printf("%q\n", model.Requests()[0].Instructions)
	// Output:
	// cached: sunny
	// "\nAnswer in English."
}

func ExampleObserver() {
	count := map[string]int{}
	counter := runlet.ObserverFunc(func(ctx context.Context, ev runlet.Event) {
		count[ev.Header().Type]++
	})
	rt := runlet.NewRuntime(runlet.WithObservers(counter))
	_, _ = rt.Run(context.Background(), &runlet.Agent{Model: exampleModel(), Tools: []runlet.Tool{weather()}}, "Weather?")
	fmt.Println(count["model.finished"], count["tool.finished"], count["run.finished"])
	// Output: 2 1 1
}

func ExampleNewJSONLObserver() {
	model := runlettest.NewModel(runlettest.TextReply("Hi!"))
	var sb strings.Builder
	rt := runlet.NewRuntime(runlet.WithObservers(runlet.NewJSONLObserver(&sb)))
	_, _ = rt.Run(context.Background(), &runlet.Agent{Model: model}, "Hello", runlet.WithRunID("run_1"))
	for line := range strings.Lines(sb.String()) {
		ev, _ := runlet.UnmarshalEvent([]byte(line))
		fmt.Println(ev.Header().Type)
	}
	// Output:
	// run.started
	// state.changed
	// model.started
	// model.finished
	// state.changed
	// run.finished
}

func ExampleRuntime_Resume() {
	store := runlet.NewMemoryStore()
	del := runlet.NewTool("delete_file", "Deletes a file.", func(ctx context.Context, in struct {
		Path string `json:"path"`
	}) (string, error) {
		return "deleted " + in.Path, nil
	}, runlet.WithApproval())
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "delete_file", `{"path":"/tmp/old.log"}`)),
		runlettest.TextReply("Deleted /tmp/old.log."),
	)
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{del}}

	res, _ := runlet.NewRuntime(runlet.WithStore(store)).Run(context.Background(), agent, "Clean up.")
	fmt.Println(res.Status, res.Pending[0].Name, string(res.Pending[0].Arguments))

	// Later, perhaps in another process sharing the store:
	res, err := runlet.NewRuntime(runlet.WithStore(store)).Resume(context.Background(), agent, res.RunID, runlet.Approve("c1"))
	fmt.Println(res.Status, res.Output, err)

	_, err = runlet.NewRuntime(runlet.WithStore(store)).Resume(context.Background(), agent, res.RunID, runlet.Approve("c1"))
	fmt.Println(errors.Is(err, runlet.ErrNotFound))
	// Output:
	// interrupted delete_file {"path":"/tmp/old.log"}
	// finished Deleted /tmp/old.log. <nil>
	// true
}
