package temporal

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// outstanding counts tool activities the workflow scheduled whose tool has
// not returned yet, as the workflow schedules each (an over-count: a tool
// returns before the workflow learns of it).
type outstanding struct {
	interceptor.WorkerInterceptorBase
	scheduled, returned, peak atomic.Int64
}

func (o *outstanding) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &outstandingIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, o: o}
}

type outstandingIn struct {
	interceptor.WorkflowInboundInterceptorBase
	o *outstanding
}

func (i *outstandingIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&outstandingOut{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, o: i.o})
}

type outstandingOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	o *outstanding
}

func (w *outstandingOut) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if activityType == ToolActivityName {
		n := w.o.scheduled.Add(1) - w.o.returned.Load()
		for p := w.o.peak.Load(); n > p && !w.o.peak.CompareAndSwap(p, n); p = w.o.peak.Load() {
		}
	}
	return w.Next.ExecuteActivity(ctx, activityType, args...)
}

// A turn of many calls keeps at most RunInput.ToolConcurrency tool
// activities outstanding, and its results come back in the model's order.
// Before, every call was scheduled at once: 2,000 or more pending
// activities is past the Temporal server's default limit, and the
// workflow task failed for ever.
func TestToolActivitiesAreBounded(t *testing.T) {
	const n, conc = 200, 4
	o := &outstanding{}
	var running atomic.Int64
	release := make(chan struct{})
	var released atomic.Bool
	tool := runlet.NewTool("count", "counts", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		defer o.returned.Add(1)
		// The calls wait until the window is full, so none returns while
		// a scheduler that starts more than conc at once does it.
		if running.Add(1) >= conc && released.CompareAndSwap(false, true) {
			close(release)
		}
		select {
		case <-release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return "r" + strconv.Itoa(in.N), nil
	})
	calls := make([]runlet.ToolCallPart, n)
	for i := range calls {
		calls[i] = runlettest.Call("c"+strconv.Itoa(i), "count", `{"n":`+strconv.Itoa(i)+`}`)
	}
	model := runlettest.NewModel(runlettest.ToolCallReply(calls...), runlettest.TextReply("done"))
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{tool}}}})
	e := env(t, d)
	e.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{o}})
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go", ToolConcurrency: conc})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if p := o.peak.Load(); p > conc {
		t.Fatalf("%d tool activities outstanding at once, want at most %d", p, conc)
	}
	got := toolResults(res.Messages[2])
	if len(got) != n || o.returned.Load() != n {
		t.Fatalf("%d results, %d executions, want %d", len(got), o.returned.Load(), n)
	}
	for i, r := range got {
		if r.CallID != "c"+strconv.Itoa(i) || r.Content != "r"+strconv.Itoa(i) || r.IsError {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
}

// An error result quotes at most 1 KiB of what the model sent, as in
// Runlet: an unknown tool's name came back whole (even past MaxToolOutput),
// a rejected argument up to MaxToolOutput. 16 KiB of them show it (a
// megabyte makes the workflow's task slow under the race detector).
func TestCheckMessagesAreBounded(t *testing.T) {
	tool := runlet.NewTool("count", "counts", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		return "ok", nil
	})
	big := strings.Repeat("x", 16<<10)
	model := runlettest.NewModel(runlettest.ToolCallReply(
		runlettest.Call("c1", big, `{}`),
		runlettest.Call("c2", "count", `{"n":"`+big+`"}`),
	), runlettest.TextReply("done"))
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{tool}}}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "go"})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	for _, r := range toolResults(res.Messages[2]) {
		if !r.IsError || len(r.Content) > 2048 {
			t.Errorf("%s: result of %d bytes: %.120q", r.CallID, len(r.Content), r.Content)
		}
	}
}
