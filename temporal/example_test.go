package temporal_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"github.com/runlet/runlet/temporal"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

// A worker registers the agents it runs; a starter names one in the input.
func Example() {
	agent := &runlet.Agent{
		Name:  "assistant",
		Model: runlettest.NewModel(runlettest.TextReply("Hello from a durable run.")),
	}
	d, err := temporal.New(temporal.Config{Agents: []*runlet.Agent{agent}})
	if err != nil {
		log.Fatal(err)
	}
	// On a real worker: d.Register(worker.New(c, "queue", worker.Options{})).
	// Here the SDK's test environment runs the workflow in process.
	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := s.NewTestWorkflowEnvironment()
	d.Register(env)
	env.ExecuteWorkflow(temporal.WorkflowName, temporal.RunInput{Agent: "assistant", Input: "Hi"})
	var res runlet.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output, res.Turns)
	// Output: Hello from a durable run. 1
}

// Starting a run, deciding on its pending calls and waiting for its result,
// from any process with a client.
func ExampleDecide() {
	run := func(ctx context.Context, c client.Client) (*runlet.Result, error) {
		r, err := temporal.Start(ctx, c, client.StartWorkflowOptions{ID: "order-42", TaskQueue: "agents"},
			temporal.RunInput{Agent: "assistant", Input: "Refund order 42."})
		if err != nil {
			return nil, err
		}
		// Later, perhaps days later, perhaps in another process:
		pending, err := temporal.Pending(ctx, c, "order-42")
		if err != nil {
			return nil, err
		}
		for _, call := range pending {
			if err := temporal.Decide(ctx, c, "order-42", runlet.Approve(call.ID)); err != nil {
				return nil, err
			}
		}
		return temporal.Wait(ctx, r)
	}
	_ = run
}
