package modelkit_test

import (
	"context"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
)

// A Model from one function: Stream comes for free.
func ExampleGenerateFunc() {
	echo := modelkit.GenerateFunc(func(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
		last := req.Messages[len(req.Messages)-1].Text()
		return &runlet.ModelResponse{Message: runlet.AssistantText("you said: " + last), FinishReason: runlet.FinishStop}, nil
	})
	res, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Model: echo}, "hello")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Output)
	// Output: you said: hello
}

// An adapter feeds every delta it yields to an Accumulator and hands over
// the assembled response in the final StreamDone event.
func ExampleAccumulator() {
	var acc modelkit.Accumulator
	for _, ev := range []runlet.StreamEvent{
		{Kind: runlet.StreamTextDelta, Delta: "Hel"},
		{Kind: runlet.StreamTextDelta, Delta: "lo"},
		{Kind: runlet.StreamToolCallDelta, Index: 0, ID: "c1", Name: "get_weather", Delta: `{"city":`},
		{Kind: runlet.StreamToolCallDelta, Index: 0, Delta: `"Rome"}`},
	} {
		acc.Add(ev)
	}
	resp := acc.Response(runlet.Usage{InputTokens: 12, OutputTokens: 9}, "")
	fmt.Println(resp.Message.Text(), resp.FinishReason, string(resp.Message.ToolCalls()[0].Arguments))
	// Output: Hello tool_calls {"city":"Rome"}
}
