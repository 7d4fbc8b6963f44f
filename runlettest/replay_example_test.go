package runlettest_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/demo"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// A Replayer under a real adapter: the run goes through the Chat
// Completions adapter and the runtime, offline. In a test, load your own
// cassette (recorded once with NewRecorder) with LoadCassette, and check
// rep.Done() at the end.
func ExampleNewReplayer() {
	rep := runlettest.NewReplayer(demo.Cassette(), runlettest.IgnoreBody())
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

	for ev, err := range runlet.NewRuntime().Stream(context.Background(), agent, demo.Question) {
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

// Recording a run against a server (here a fake one; in real use, the
// provider's API): credentials never reach the cassette.
func ExampleNewRecorder() {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "Hello!"})
	defer srv.Close()

	rec := runlettest.NewRecorder(nil) // nil: http.DefaultTransport
	model := openai.NewChatCompletions(openai.Config{
		Model: "gpt-4o-mini", BaseURL: srv.BaseURL(), APIKey: "sk-secret",
		HTTPClient: &http.Client{Transport: rec},
	})
	agent := &runlet.Agent{Name: "hello", Model: model}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "Hi")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Output)

	c := rec.Cassette() // or rec.Save("testdata/hello.cassette.json")
	in := c.Interactions[0]
	fmt.Println(in.Request.Method, in.Request.URL[len(srv.URL):], in.Response.Status)
	fmt.Println("authorization recorded:", in.Request.Header.Get("Authorization") != "")
	// Output:
	// Hello!
	// POST /v1/chat/completions 200
	// authorization recorded: false
}
