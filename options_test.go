package runlet_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// An option meaningful at several levels has one name and works at each;
// the most specific wins (tool over run over Runtime), and lists add up.
func TestOptionLevels(t *testing.T) {
	big := func(name string, opts ...runlet.ToolOption) runlet.Tool {
		return runlet.NewTool(name, "", func(context.Context, struct{}) (string, error) {
			return strings.Repeat("y", 1000), nil
		}, opts...)
	}
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("a", "plain", `{}`), runlettest.Call("b", "own_cap", `{}`)),
		runlettest.TextReply("ok"),
	)
	var order []string
	watch := func(name string) runlet.Observer {
		return runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
			if _, ok := ev.(*runlet.RunStarted); ok {
				order = append(order, name)
			}
		})
	}
	rt := runlet.NewRuntime(runlet.WithMaxToolOutput(500), runlet.WithObservers(watch("runtime")))
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{big("plain"), big("own_cap", runlet.WithMaxToolOutput(10))}}
	res, err := rt.Run(context.Background(), agent, "go", runlet.WithMaxToolOutput(100), runlet.WithObservers(watch("run")))
	if err != nil {
		t.Fatal(err)
	}
	results := res.Messages[2].Parts
	if got := results[0].(runlet.ToolResultPart).Content; !strings.Contains(got, "showing 100 of 1000") {
		t.Errorf("run cap over runtime cap: %q", got)
	}
	if got := results[1].(runlet.ToolResultPart).Content; !strings.Contains(got, "showing 10 of 1000") {
		t.Errorf("tool cap over run cap: %q", got)
	}
	if strings.Join(order, ",") != "runtime,run" {
		t.Errorf("observers %v", order)
	}

	// A run's max turns and limits win over the Runtime's and the agent's.
	loop := runlettest.NewModel()
	loop.Func = func(context.Context, *runlet.ModelRequest) runlettest.Reply {
		return runlettest.ToolCallReply(runlettest.Call("", "plain", `{}`))
	}
	rt = runlet.NewRuntime(runlet.WithMaxTurns(10), runlet.WithLimits(runlet.UsageLimits{Requests: 1}))
	agent = &runlet.Agent{Model: loop, Tools: []runlet.Tool{big("plain")}, MaxTurns: 5}
	_, err = rt.Run(context.Background(), agent, "go", runlet.WithMaxTurns(2), runlet.WithLimits(runlet.UsageLimits{}))
	var pe *runlet.PolicyError
	if !errors.As(err, &pe) || pe.Policy != "max_turns" || len(loop.Requests()) != 2 {
		t.Fatalf("err = %v after %d requests", err, len(loop.Requests()))
	}
}
