package runlet_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// manyCalls returns n calls of tool, with IDs c0, c1, ... and {"n":i}.
func manyCalls(n int, tool string) []runlet.ToolCallPart {
	calls := make([]runlet.ToolCallPart, n)
	for i := range calls {
		calls[i] = runlettest.Call("c"+strconv.Itoa(i), tool, `{"n":`+strconv.Itoa(i)+`}`)
	}
	return calls
}

// A model asking for 10,000 calls in one turn gets them all run, in the
// model's order, by a bounded pool: the goroutines alive while the tools
// run stay within a small multiple of the concurrency limit, not one per
// call (about 8,900 when each call had its own goroutine).
func TestThousandsOfToolCallsUseBoundedGoroutines(t *testing.T) {
	const n, conc = 10_000, 8
	var peak atomic.Int64
	tool := runlet.NewTool("count", "counts", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		g := int64(runtime.NumGoroutine())
		for p := peak.Load(); g > p && !peak.CompareAndSwap(p, g); p = peak.Load() {
		}
		return "r" + strconv.Itoa(in.N), nil
	})
	model := runlettest.NewModel(runlettest.ToolCallReply(manyCalls(n, "count")...), runlettest.TextReply("done"))
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{tool}}
	rt := runlet.NewRuntime(runlet.WithToolConcurrency(conc))
	base := runtime.NumGoroutine()
	res, err := rt.Run(context.Background(), agent, "go")
	if err != nil {
		t.Fatal(err)
	}
	// Each worker runs its call on one more goroutine (to abandon a tool
	// that ignores its context); a few more for slack.
	if got, limit := peak.Load()-int64(base), int64(2*conc+4); got > limit {
		t.Fatalf("%d goroutines above the test's while tools ran, want at most %d", got, limit)
	}
	t.Logf("peak goroutines above the test's: %d (concurrency %d)", peak.Load()-int64(base), conc)
	parts := res.Messages[2].Parts
	if len(parts) != n {
		t.Fatalf("%d results, want %d", len(parts), n)
	}
	for i, p := range parts {
		tr := p.(runlet.ToolResultPart)
		if tr.CallID != "c"+strconv.Itoa(i) || tr.Content != "r"+strconv.Itoa(i) || tr.IsError {
			t.Fatalf("result %d = %+v", i, tr)
		}
	}
}

// Cancelling a run midway through a large turn stops the pool: calls not
// yet started never run, and every worker is gone when Run returns (goleak
// checks it in TestMain).
func TestCancelStopsLargeTurn(t *testing.T) {
	const n, conc, cancelAt = 2_000, 4, 50
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran atomic.Int64
	tool := runlet.NewTool("count", "counts", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		if ran.Add(1) == cancelAt {
			cancel()
		}
		return "ok", nil
	})
	model := runlettest.NewModel(runlettest.ToolCallReply(manyCalls(n, "count")...), runlettest.TextReply("done"))
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{tool}}
	var finished int
	var last error
	for ev, err := range runlet.NewRuntime(runlet.WithToolConcurrency(conc)).Stream(ctx, agent, "go") {
		if _, ok := ev.(*runlet.ToolFinished); ok {
			finished++
		}
		last = err
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", last)
	}
	// Calls that had started when cancel ran may still finish: at most one
	// per worker besides the one that cancelled.
	if got := ran.Load(); got > cancelAt+conc {
		t.Fatalf("%d calls ran after a cancel at call %d, want at most %d", got, cancelAt, cancelAt+conc)
	}
	if finished > cancelAt+conc {
		t.Fatalf("%d tool.finished events, want at most %d", finished, cancelAt+conc)
	}
}

// UsageLimits.ToolCalls is the cap on what a model may ask for: a turn
// that would pass it fails the run before any of its calls runs.
func TestToolCallLimitRefusesLargeTurnBeforeRunning(t *testing.T) {
	var ran atomic.Int64
	tool := runlet.NewTool("count", "counts", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		ran.Add(1)
		return "ok", nil
	})
	model := runlettest.NewModel(runlettest.ToolCallReply(manyCalls(10_000, "count")...), runlettest.TextReply("done"))
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{tool}}
	rt := runlet.NewRuntime(runlet.WithLimits(runlet.UsageLimits{ToolCalls: 100}))
	_, err := rt.Run(context.Background(), agent, "go")
	var pe *runlet.PolicyError
	if !errors.Is(err, runlet.ErrUsageLimit) || !errors.As(err, &pe) || pe.Policy != "usage_limit:tool_calls" {
		t.Fatalf("err = %v", err)
	}
	if got := ran.Load(); got != 0 {
		t.Fatalf("%d calls ran, want none", got)
	}
	if !strings.Contains(err.Error(), "100 tool calls") {
		t.Fatalf("err = %v, want the limit named", err)
	}
}

// A tool that ignores its context is abandoned after its timeout, and its
// goroutine lives on until it returns: a run stops starting calls once as
// many as WithToolConcurrency are abandoned and still running, so a model
// asking for hundreds of calls of it cannot pile up a goroutine each.
func TestAbandonedToolsAreBounded(t *testing.T) {
	const n, conc = 200, 4
	release := make(chan struct{})
	var started atomic.Int64
	stuck := runlet.NewTool("stuck", "ignores its context", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		started.Add(1)
		<-release
		return "late", nil
	}, runlet.WithToolTimeout(time.Millisecond))
	defer close(release) // before goleak looks, in TestMain
	model := runlettest.NewModel(runlettest.ToolCallReply(manyCalls(n, "stuck")...), runlettest.TextReply("done"))
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{stuck}}
	res, err := runlet.NewRuntime(runlet.WithToolConcurrency(conc), runlet.WithLogger(discardLogger())).Run(context.Background(), agent, "go")
	if err != nil {
		t.Fatal(err)
	}
	// A worker may start a call while another's is being abandoned.
	if got := started.Load(); got > 2*conc {
		t.Fatalf("%d calls started, want at most %d", got, 2*conc)
	}
	var timedOut, refused int
	for _, p := range res.Messages[2].Parts {
		tr := p.(runlet.ToolResultPart)
		switch {
		case !tr.IsError:
			t.Fatalf("result %+v", tr)
		case strings.Contains(tr.Content, "timed out"):
			timedOut++
		case strings.Contains(tr.Content, "still run after their timeout"):
			refused++
		}
	}
	if timedOut != int(started.Load()) || timedOut+refused != n {
		t.Fatalf("%d timed out, %d refused, %d started", timedOut, refused, started.Load())
	}
}

// The message of a call that fails its checks quotes at most 1 KiB of what
// the model sent (a validation error quotes the rejected value, an
// unknown tool its name): a megabyte of it came back whole.
func TestCheckMessagesAreBounded(t *testing.T) {
	const max = 2048
	tool := runlet.NewTool("count", "counts", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		return "ok", nil
	})
	big := strings.Repeat("x", 1<<20)
	for name, call := range map[string]runlet.ToolCallPart{
		"wrong type":     runlettest.Call("c", "count", `{"n":"`+big+`"}`),
		"extra property": runlettest.Call("c", "count", `{"n":1,"`+big+`":1}`),
		"not an object":  runlettest.Call("c", "count", `[`+strings.Repeat("1,", 1<<19)+`1]`),
		"unknown tool":   runlettest.Call("c", big, `{}`),
		"invalid JSON":   runlettest.Call("c", "count", `{"n":`+big),
	} {
		t.Run(name, func(t *testing.T) {
			model := runlettest.NewModel(runlettest.ToolCallReply(call), runlettest.TextReply("done"))
			rt := runlet.NewRuntime()
			res, err := rt.Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{tool}}, "go")
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Messages[2].Parts[0].(runlet.ToolResultPart)
			if !tr.IsError || len(tr.Content) > max || !strings.HasPrefix(tr.Content, "Error: ") {
				t.Fatalf("result of %d bytes: %.200q", len(tr.Content), tr.Content)
			}
		})
	}
}
