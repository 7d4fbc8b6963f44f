package runlet_test

import (
	"context"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// A run priced from your own table: the model that answered each call is
// looked up, and a model the table lacks leaves the cost incomplete, never
// zero.
func ExampleWithPrices() {
	answer := runlettest.TextReply("Paris.")
	answer.Response.Model = "claude-haiku-4-5-20251001" // as the API reports it
	answer.Response.Usage = runlet.Usage{InputTokens: 12_000, CachedInputTokens: 10_000, OutputTokens: 200}
	agent := &runlet.Agent{Model: runlettest.NewModel(answer)}

	rt := runlet.NewRuntime(runlet.WithPrices(runlet.Prices{
		"claude-haiku-4-5": {Input: 1, CachedInput: 0.10, CacheWrite: 1.25, Output: 5}, // USD per million tokens
	}))
	res, err := rt.Run(context.Background(), agent, "Capital of France?")
	if err != nil {
		panic(err)
	}
	fmt.Printf("cost $%.4f, complete: %v\n", res.Cost.Amount, res.Cost.Known())
	for model, u := range res.UsageByModel {
		fmt.Printf("%s: %d calls, %d input (%d cached), %d output\n", model, u.Requests, u.InputTokens, u.CachedInputTokens, u.OutputTokens)
	}
	// Output:
	// cost $0.0040, complete: true
	// claude-haiku-4-5-20251001: 1 calls, 12000 input (10000 cached), 200 output
}
