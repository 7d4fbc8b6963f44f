package runlettest_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// A Replayer under a real adapter: the run goes through the Chat
// Completions adapter and the runtime, offline. In a test, load your own
// cassette (recorded once with NewRecorder) with LoadCassette, and check
// rep.Done() at the end.
func ExampleNewReplayer() {
	rep := runlettest.NewReplayer(runlettest.DemoCassette(), runlettest.IgnoreBody())
	model := openai.NewChatCompletions(openai.Config{
		Model:      "gpt-4o-mini",
		APIKey:     "unused", // nothing is sent anywhere
		HTTPClient: &http.Client{Transport: rep},
	})
	getCapital := runlet.NewTool("get_capital", "Returns the capital of a country.",
		func(_ context.Context, in struct {
			Country string `json:"country"`
		}) (string, error) {
			return "London", nil
		})
	agent := &runlet.Agent{Name: "demo", Model: model, Tools: []runlet.Tool{getCapital}}

	for ev, err := range runlet.NewRuntime().Stream(context.Background(), agent, runlettest.DemoQuestion) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev := ev.(type) {
		case *runlet.ToolFinished:
			fmt.Printf("%s(%s) = %s\n", ev.Call.Name, ev.Call.Arguments, ev.Result.Content)
		case *runlet.RunFinished:
			fmt.Println(ev.Result.Output)
		}
	}
	fmt.Println("unused interactions:", rep.Remaining())
	// Output:
	// get_capital({"country":"UK"}) = London
	// The capital of the UK is London.
	// unused interactions: 0
}
