package runlet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"city name"`
}

func weatherTool() runlet.Tool {
	return runlet.NewTool("get_weather", "Current weather for a city.",
		func(ctx context.Context, in weatherIn) (string, error) {
			return "sunny in " + in.City, nil
		})
}

// collect drains a stream into its events and final error.
func collect(t *testing.T, seq func(func(runlet.Event, error) bool)) ([]runlet.Event, error) {
	t.Helper()
	var evs []runlet.Event
	var last error
	for ev, err := range seq {
		if last != nil {
			t.Fatalf("event %T after the error %v", ev, last)
		}
		evs = append(evs, ev)
		last = err
	}
	return evs, last
}

func types(evs []runlet.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Header().Type)
	}
	return out
}

func terminalCount(evs []runlet.Event) int {
	n := 0
	for _, e := range evs {
		switch e.(type) {
		case *runlet.RunFinished, *runlet.RunFailed, *runlet.RunInterrupted:
			n++
		}
	}
	return n
}

func TestRunToolLoop(t *testing.T) {
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Shanghai"}`)),
		runlettest.TextReply("It is sunny in Shanghai."),
	)
	agent := &runlet.Agent{Name: "w", Instructions: "Be brief.", Model: model, Tools: []runlet.Tool{weatherTool()}}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "Weather in Shanghai?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runlet.StateFinished || res.Output != "It is sunny in Shanghai." || res.Turns != 2 {
		t.Fatalf("result = %+v", res)
	}
	if got := len(res.Messages); got != 4 { // user, assistant(call), tool, assistant
		t.Fatalf("messages = %d, want 4", got)
	}
	tr := res.Messages[2].Parts[0].(runlet.ToolResultPart)
	if tr.CallID != "c1" || tr.Content != "sunny in Shanghai" || tr.IsError {
		t.Fatalf("tool result = %+v", tr)
	}
	if res.Usage.TotalTokens != 30 || res.Usage.Requests != 2 {
		t.Fatalf("usage = %+v", res.Usage)
	}
	reqs := model.Requests()
	if reqs[0].Instructions != "Be brief." || len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "get_weather" {
		t.Fatalf("first request = %+v", reqs[0])
	}
	if len(reqs[1].Messages) != 3 {
		t.Fatalf("second request has %d messages, want 3", len(reqs[1].Messages))
	}
}

func TestStreamEventsAndOrder(t *testing.T) {
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`)),
		runlettest.TextReply("Sunny, 21 degrees."),
	)
	model.ChunkSize = 3
	agent := &runlet.Agent{Name: "w", Model: model, Tools: []runlet.Tool{weatherTool()}}
	evs, err := collect(t, runlet.NewRuntime().Stream(context.Background(), agent, "Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	if n := terminalCount(evs); n != 1 {
		t.Fatalf("%d terminal events", n)
	}
	fin, ok := evs[len(evs)-1].(*runlet.RunFinished)
	if !ok {
		t.Fatalf("last event %T", evs[len(evs)-1])
	}
	var text strings.Builder
	for i, e := range evs {
		if e.Header().Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Header().Seq)
		}
		if e.Header().RunID != fin.Result.RunID || e.Header().Agent != "w" {
			t.Fatalf("header %+v", e.Header())
		}
		if d, ok := e.(*runlet.TextDelta); ok {
			text.WriteString(d.Delta)
		}
	}
	if text.String() != fin.Result.Output || fin.Result.Output != "Sunny, 21 degrees." {
		t.Fatalf("deltas %q, output %q", text.String(), fin.Result.Output)
	}
	want := []string{"run.started", "state.changed", "model.started"}
	if got := types(evs)[:3]; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("first events %v", got)
	}
	// State machine: idle→thinking→acting→observing→thinking→finished.
	var states []string
	for _, e := range evs {
		if sc, ok := e.(*runlet.StateChanged); ok {
			states = append(states, string(sc.From)+">"+string(sc.To))
		}
	}
	if got := strings.Join(states, " "); got != "idle>thinking thinking>acting acting>observing observing>thinking thinking>finished" {
		t.Fatalf("states: %s", got)
	}
}

func TestFinalTurnIsResponseWithoutToolCalls(t *testing.T) {
	// Text before a tool call must not end the run.
	msg := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.TextPart{Text: "Let me check."},
		runlettest.Call("c1", "get_weather", `{"city":"Oslo"}`),
	}}
	model := runlettest.NewModel(
		runlettest.Reply{Response: &runlet.ModelResponse{Message: msg, FinishReason: runlet.FinishToolCalls}},
		runlettest.TextReply("Cold."),
	)
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{weatherTool()}}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "Oslo?")
	if err != nil || res.Output != "Cold." || res.Turns != 2 {
		t.Fatalf("res=%+v err=%v", res, err)
	}
}

func TestToolBadInputBecomesErrorResult(t *testing.T) {
	panicky := runlet.NewTool("boom", "panics", func(ctx context.Context, _ struct{}) (string, error) {
		panic("kaboom")
	})
	failing := runlet.NewTool("fail", "fails", func(ctx context.Context, _ struct{}) (string, error) {
		return "", errors.New("disk full")
	})
	slow := runlet.NewTool("slow", "sleeps", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, runlet.WithToolTimeout(20*time.Millisecond))
	// stubborn ignores its context and returns only when the test ends: a
	// sleep here would race the 20 ms timeout on a busy machine.
	release, stubbornDone := make(chan struct{}), make(chan struct{})
	var stubbornRan atomic.Bool
	stubborn := runlet.NewTool("stubborn", "ignores its context", func(ctx context.Context, _ struct{}) (string, error) {
		stubbornRan.Store(true)
		defer close(stubbornDone)
		<-release
		return "late", nil
	}, runlet.WithToolTimeout(20*time.Millisecond))
	big := runlet.NewTool("big", "huge output", func(ctx context.Context, _ struct{}) (string, error) {
		return strings.Repeat("é", 100), nil // 200 bytes
	})
	// picky passes its schema (a string) but its own decoder may refuse or panic.
	picky := runlet.NewTool("picky", "decodes its own way", func(ctx context.Context, in struct {
		V pickyString `json:"v"`
	}) (string, error) {
		return string(in.V), nil
	})
	cases := []struct {
		name, tool, args string
		kind             runlet.ToolErrorKind
		contains         string
	}{
		{"unknown tool", "nope", `{}`, runlet.ToolUnknown, `unknown tool "nope". Available tools: big, boom, fail, get_weather, picky, slow, stubborn.`},
		{"decoder refuses", "picky", `{"v":"bad"}`, runlet.ToolInvalidArgs, "Error: invalid arguments for picky: not this one."},
		{"decoder panics", "picky", `{"v":"panic"}`, runlet.ToolPanicked, "crashed (panic: picky decoder)"},
		{"decoder accepts", "picky", `{"v":"fine"}`, "", "fine"},
		{"malformed JSON", "get_weather", `{"city":`, runlet.ToolInvalidJSON, "not valid JSON"},
		{"schema violation", "get_weather", `{"city":42}`, runlet.ToolInvalidArgs, "invalid arguments for get_weather"},
		{"missing field", "get_weather", `{}`, runlet.ToolInvalidArgs, "city"},
		{"extra field", "get_weather", `{"city":"x","zip":1}`, runlet.ToolInvalidArgs, "zip"},
		{"returned error", "fail", `{}`, runlet.ToolFailed, "Error: disk full"},
		{"panic", "boom", `{}`, runlet.ToolPanicked, "crashed (panic: kaboom)"},
		{"timeout", "slow", `{}`, runlet.ToolTimedOut, "timed out after 20ms"},
		{"timeout ignored", "stubborn", `{}`, runlet.ToolTimedOut, "timed out after 20ms"},
		{"truncated", "big", `{}`, "", "[output truncated: showing 64 of 200 bytes]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			model := runlettest.NewModel(
				runlettest.ToolCallReply(runlettest.Call("c1", tc.tool, tc.args)),
				runlettest.TextReply("ok"),
			)
			agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{weatherTool(), panicky, failing, slow, stubborn, big, picky}}
			var finished *runlet.ToolFinished
			obs := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
				if f, ok := ev.(*runlet.ToolFinished); ok {
					finished = f
				}
			})
			rt := runlet.NewRuntime(runlet.WithObservers(obs), runlet.WithMaxToolOutput(64), runlet.WithLogger(discardLogger()))
			res, err := rt.Run(context.Background(), agent, "go")
			if err != nil {
				t.Fatalf("run failed: %v", err)
			}
			if res.Output != "ok" {
				t.Fatalf("run did not continue: %+v", res)
			}
			tr := res.Messages[2].Parts[0].(runlet.ToolResultPart)
			if !strings.Contains(tr.Content, tc.contains) {
				t.Fatalf("content %q does not contain %q", tr.Content, tc.contains)
			}
			if tr.IsError != (tc.kind != "") || finished.ErrorKind != tc.kind {
				t.Fatalf("is_error=%v kind=%q, want kind %q", tr.IsError, finished.ErrorKind, tc.kind)
			}
			// The model saw the error result on the next call.
			last := model.Requests()[1].Messages[2].Parts[0].(runlet.ToolResultPart)
			if last.Content != tr.Content {
				t.Fatalf("model saw %q", last.Content)
			}
		})
	}
	close(release) // let the abandoned stubborn tool finish before goleak
	if stubbornRan.Load() {
		<-stubbornDone
	}
}

type pickyString string

func (p *pickyString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	switch s {
	case "bad":
		return errors.New("not this one")
	case "panic":
		panic("picky decoder")
	}
	*p = pickyString(s)
	return nil
}

func TestParallelToolsRunConcurrentlyInModelOrder(t *testing.T) {
	var running, peak atomic.Int32
	release := make(chan struct{})
	tool := runlet.NewTool("wait", "waits", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		defer running.Add(-1)
		select {
		case <-release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		time.Sleep(time.Duration(5-in.N) * time.Millisecond) // finish in reverse order
		return fmt.Sprint("r", in.N), nil
	})
	var calls []runlet.ToolCallPart
	for i := range 5 {
		calls = append(calls, runlettest.Call(fmt.Sprint("c", i), "wait", fmt.Sprintf(`{"n":%d}`, i)))
	}
	model := runlettest.NewModel(runlettest.ToolCallReply(calls...), runlettest.TextReply("done"))
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{tool}}
	rt := runlet.NewRuntime(runlet.WithToolConcurrency(3))
	go func() {
		for peak.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		close(release)
	}()
	res, err := rt.Run(context.Background(), agent, "go")
	if err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p != 3 {
		t.Fatalf("peak concurrency %d, want 3", p)
	}
	parts := res.Messages[2].Parts
	for i, p := range parts {
		tr := p.(runlet.ToolResultPart)
		if tr.CallID != fmt.Sprint("c", i) || tr.Content != fmt.Sprint("r", i) {
			t.Fatalf("result %d = %+v", i, tr)
		}
	}
}

func TestMaxTurns(t *testing.T) {
	model := runlettest.NewModel()
	model.Func = func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		return runlettest.ToolCallReply(runlettest.Call(fmt.Sprint("c", len(req.Messages)), "get_weather", `{"city":"x"}`))
	}
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{weatherTool()}, MaxTurns: 3}
	evs, err := collect(t, runlet.NewRuntime().Stream(context.Background(), agent, "loop"))
	if !errors.Is(err, runlet.ErrMaxTurns) {
		t.Fatalf("err = %v", err)
	}
	var pe *runlet.PolicyError
	if !errors.As(err, &pe) || pe.Policy != "max_turns" {
		t.Fatalf("policy error = %v", err)
	}
	failed := evs[len(evs)-1].(*runlet.RunFailed)
	if failed.Policy != "max_turns" || failed.ErrorType != "max_turns" || failed.Result.Turns != 3 || failed.Result.Status != runlet.StateFailed {
		t.Fatalf("failed = %+v", failed)
	}
	if terminalCount(evs) != 1 {
		t.Fatal("want exactly one terminal event")
	}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "loop")
	if !errors.Is(err, runlet.ErrMaxTurns) || res == nil || len(res.Messages) != 7 {
		t.Fatalf("Run: res=%+v err=%v", res, err)
	}
}

func TestUsageLimits(t *testing.T) {
	cases := []struct {
		name   string
		limits runlet.UsageLimits
		policy string
	}{
		{"requests", runlet.UsageLimits{Requests: 1}, "usage_limit:requests"},
		{"total tokens", runlet.UsageLimits{TotalTokens: 20}, "usage_limit:total_tokens"},
		{"input tokens", runlet.UsageLimits{InputTokens: 5}, "usage_limit:input_tokens"},
		{"output tokens", runlet.UsageLimits{OutputTokens: 4}, "usage_limit:output_tokens"},
		{"tool calls", runlet.UsageLimits{ToolCalls: 1}, "usage_limit:tool_calls"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			model := runlettest.NewModel(
				runlettest.ToolCallReply(runlettest.Call("a", "get_weather", `{"city":"x"}`), runlettest.Call("b", "get_weather", `{"city":"y"}`)),
				runlettest.TextReply("done"),
			)
			agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{weatherTool()}}
			res, err := runlet.NewRuntime(runlet.WithLimits(tc.limits)).Run(context.Background(), agent, "go")
			var pe *runlet.PolicyError
			if !errors.Is(err, runlet.ErrUsageLimit) || !errors.As(err, &pe) || pe.Policy != tc.policy {
				t.Fatalf("err = %v", err)
			}
			if res == nil || res.Status != runlet.StateFailed {
				t.Fatalf("res = %+v", res)
			}
		})
	}
}

func TestHooks(t *testing.T) {
	t.Run("edit request and arguments, compose in order", func(t *testing.T) {
		model := runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`)),
			runlettest.TextReply("ok"),
		)
		var order []string
		h1 := runlet.Hooks{
			BeforeModelCall: func(ctx context.Context, req *runlet.ModelRequest) error {
				order = append(order, "h1")
				req.Instructions += " [h1]"
				return nil
			},
			BeforeToolCall: func(ctx context.Context, call *runlet.ToolCallPart) (*runlet.ToolResultPart, error) {
				call.Arguments = json.RawMessage(`{"city":"Lyon"}`)
				return nil, nil
			},
		}
		h2 := runlet.Hooks{
			BeforeModelCall: func(ctx context.Context, req *runlet.ModelRequest) error {
				order = append(order, "h2")
				req.Instructions += " [h2]"
				return nil
			},
			AfterToolCall: func(ctx context.Context, call runlet.ToolCallPart, res *runlet.ToolResultPart) error {
				res.Content += "!"
				return nil
			},
		}
		var started *runlet.ModelStarted
		obs := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
			if s, ok := ev.(*runlet.ModelStarted); ok && started == nil {
				started = s
			}
		})
		agent := &runlet.Agent{Instructions: "base", Model: model, Tools: []runlet.Tool{weatherTool()}}
		res, err := runlet.NewRuntime(runlet.WithHooks(h1, h2), runlet.WithObservers(obs)).Run(context.Background(), agent, "go")
		if err != nil {
			t.Fatal(err)
		}
		if got := model.Requests()[0].Instructions; got != "base [h1] [h2]" {
			t.Fatalf("instructions %q", got)
		}
		if started.Request.Instructions != "base [h1] [h2]" {
			t.Fatal("model.started does not carry the request as sent")
		}
		if strings.Join(order[:2], ",") != "h1,h2" {
			t.Fatalf("order %v", order)
		}
		if got := res.Messages[2].Parts[0].(runlet.ToolResultPart).Content; got != "sunny in Lyon!" {
			t.Fatalf("tool result %q", got)
		}
	})
	t.Run("short-circuit and deny", func(t *testing.T) {
		var ran atomic.Int32
		tool := runlet.NewTool("t", "", func(ctx context.Context, _ struct{}) (string, error) {
			ran.Add(1)
			return "ran", nil
		})
		model := runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("a", "t", `{}`), runlettest.Call("b", "t", `{}`), runlettest.Call("c", "t", `{}`)),
			runlettest.TextReply("ok"),
		)
		h := runlet.Hooks{BeforeToolCall: func(ctx context.Context, call *runlet.ToolCallPart) (*runlet.ToolResultPart, error) {
			switch call.ID {
			case "a":
				return &runlet.ToolResultPart{Content: "cached"}, nil
			case "b":
				return nil, runlet.Deny("not on weekends")
			}
			return nil, nil
		}}
		res, err := runlet.NewRuntime(runlet.WithHooks(h)).Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{tool}}, "go")
		if err != nil {
			t.Fatal(err)
		}
		parts := res.Messages[2].Parts
		a, b, c := parts[0].(runlet.ToolResultPart), parts[1].(runlet.ToolResultPart), parts[2].(runlet.ToolResultPart)
		if a.Content != "cached" || a.CallID != "a" || a.IsError {
			t.Fatalf("a = %+v", a)
		}
		if !b.IsError || !strings.Contains(b.Content, "denied: not on weekends") {
			t.Fatalf("b = %+v", b)
		}
		if c.Content != "ran" || ran.Load() != 1 {
			t.Fatalf("c = %+v, ran %d", c, ran.Load())
		}
	})
	t.Run("hook error fails the run naming the hook", func(t *testing.T) {
		model := runlettest.NewModel(runlettest.TextReply("never"))
		h := runlet.Hooks{BeforeModelCall: func(ctx context.Context, req *runlet.ModelRequest) error {
			return errors.New("blocked by policy")
		}}
		evs, err := collect(t, runlet.NewRuntime(runlet.WithHooks(h)).Stream(context.Background(), &runlet.Agent{Model: model}, "go"))
		var pe *runlet.PolicyError
		if !errors.As(err, &pe) || pe.Policy != "hook:BeforeModelCall" {
			t.Fatalf("err = %v", err)
		}
		if f := evs[len(evs)-1].(*runlet.RunFailed); f.Policy != "hook:BeforeModelCall" {
			t.Fatalf("failed = %+v", f)
		}
		if len(model.Requests()) != 0 {
			t.Fatal("model was called")
		}
	})
}

func TestObserverPanicIsolated(t *testing.T) {
	model := runlettest.NewModel(runlettest.TextReply("fine"))
	var seen int
	bad := runlet.ObserverFunc(func(context.Context, runlet.Event) { panic("observer bug") })
	good := runlet.ObserverFunc(func(context.Context, runlet.Event) { seen++ })
	var logs strings.Builder
	rt := runlet.NewRuntime(runlet.WithObservers(bad, good), runlet.WithLogger(textLogger(&logs)))
	res, err := rt.Run(context.Background(), &runlet.Agent{Model: model}, "hi")
	if err != nil || res.Output != "fine" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if seen == 0 {
		t.Fatal("the second observer saw nothing")
	}
	if !strings.Contains(logs.String(), "observer panicked") || !strings.Contains(logs.String(), "observer bug") {
		t.Fatalf("panic not reported: %s", logs.String())
	}
}

func TestCancelMidModelCall(t *testing.T) {
	model := runlettest.NewModel(runlettest.Reply{Response: runlettest.TextReply("late").Response, Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	res, err := runlet.NewRuntime().Run(ctx, &runlet.Agent{Model: model}, "hi")
	if !errors.Is(err, context.Canceled) || res == nil || res.Status != runlet.StateFailed {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if time.Since(start) > 30*time.Second { // a hang guard: the reply is an hour away
		t.Fatal("cancellation was not prompt")
	}
}

func TestCancelMidToolAndSessionHasNoHalfTurn(t *testing.T) {
	started := make(chan struct{})
	tool := runlet.NewTool("block", "", func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	})
	store := runlet.NewMemoryStore()
	rt := runlet.NewRuntime(runlet.WithStore(store))
	// One complete earlier run in the session.
	first := runlettest.NewModel(runlettest.TextReply("hello"))
	if _, err := rt.Run(context.Background(), &runlet.Agent{Model: first}, "hi", runlet.WithSession("s1")); err != nil {
		t.Fatal(err)
	}
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "block", `{}`)))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res, err := rt.Run(ctx, &runlet.Agent{Model: model, Tools: []runlet.Tool{tool}}, "block please", runlet.WithSession("s1"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if len(res.Messages) != 2 { // input + assistant call; no result
		t.Fatalf("partial result has %d messages", len(res.Messages))
	}
	hist, _ := store.LoadSession(context.Background(), "s1")
	if len(hist) != 2 || hist[1].Text() != "hello" {
		t.Fatalf("session holds %d messages: %+v", len(hist), hist)
	}
}

func TestBreakOutOfStreamCancelsRun(t *testing.T) {
	toolCtxDone := make(chan struct{})
	var ran atomic.Bool
	tool := runlet.NewTool("block", "", func(ctx context.Context, _ struct{}) (string, error) {
		ran.Store(true)
		<-ctx.Done()
		close(toolCtxDone)
		return "", ctx.Err()
	})
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "block", `{}`)))
	var terminal runlet.Event
	obs := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
		if _, ok := ev.(*runlet.RunFailed); ok {
			terminal = ev
		}
	})
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{tool}}
	for ev := range runlet.NewRuntime(runlet.WithObservers(obs)).Stream(context.Background(), agent, "go") {
		if _, ok := ev.(*runlet.ToolStarted); ok {
			break
		}
	}
	// Breaking at tool.started cancels the run before or while the tool runs:
	// either it never ran, or Stream returned only after it saw the cancellation.
	if ran.Load() {
		select {
		case <-toolCtxDone:
		default:
			t.Fatal("Stream returned before the tool saw its context cancelled")
		}
	}
	if terminal == nil {
		t.Fatal("observers did not see the terminal event")
	}
}

func TestBreakOutOfStreamMidText(t *testing.T) {
	model := runlettest.NewModel(runlettest.TextReply(strings.Repeat("word ", 200)))
	model.ChunkSize = 5
	n := 0
	for ev := range runlet.NewRuntime().Stream(context.Background(), &runlet.Agent{Model: model}, "go") {
		if _, ok := ev.(*runlet.TextDelta); ok {
			n++
			if n == 3 {
				break
			}
		}
	}
	if n != 3 {
		t.Fatalf("n = %d", n)
	}
}

func TestConcurrentRunsOneRuntime(t *testing.T) {
	rt := runlet.NewRuntime(runlet.WithStore(runlet.NewMemoryStore()), runlet.WithObservers(runlet.NewJSONLObserver(&syncDiscard{})))
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			model := runlettest.NewModel(
				runlettest.ToolCallReply(runlettest.Call("c", "get_weather", fmt.Sprintf(`{"city":"c%d"}`, i))),
				runlettest.TextReply(fmt.Sprint("done ", i)),
			)
			agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{weatherTool()}}
			session := fmt.Sprint("s", i%4)
			var err error
			var out string
			if i%2 == 0 {
				var res *runlet.Result
				res, err = rt.Run(context.Background(), agent, "go", runlet.WithSession(session))
				if res != nil {
					out = res.Output
				}
			} else {
				for ev, e := range rt.Stream(context.Background(), agent, "go") {
					err = e
					if f, ok := ev.(*runlet.RunFinished); ok {
						out = f.Result.Output
					}
				}
			}
			if err != nil && !errors.Is(err, runlet.ErrConflict) {
				t.Errorf("run %d: %v", i, err)
			}
			if err == nil && out != fmt.Sprint("done ", i) {
				t.Errorf("run %d output %q", i, out)
			}
		}()
	}
	wg.Wait()
}

func TestSessionHistoryAcrossRuns(t *testing.T) {
	rt := runlet.NewRuntime(runlet.WithStore(runlet.NewMemoryStore()))
	model := runlettest.NewModel(runlettest.TextReply("Hi Ada."), runlettest.TextReply("Your name is Ada."))
	agent := &runlet.Agent{Model: model}
	if _, err := rt.Run(context.Background(), agent, "I am Ada.", runlet.WithSession("s")); err != nil {
		t.Fatal(err)
	}
	res, err := rt.Run(context.Background(), agent, "Who am I?", runlet.WithSession("s"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 2 {
		t.Fatalf("run added %d messages", len(res.Messages))
	}
	msgs := model.Requests()[1].Messages
	if len(msgs) != 3 || msgs[0].Text() != "I am Ada." || msgs[1].Text() != "Hi Ada." || msgs[2].Text() != "Who am I?" {
		t.Fatalf("second request messages: %+v", msgs)
	}
}

func TestFailedModelCallLeavesSessionUntouched(t *testing.T) {
	store := runlet.NewMemoryStore()
	rt := runlet.NewRuntime(runlet.WithStore(store))
	perr := &runlet.ProviderError{Provider: "fake", StatusCode: 500, Message: "boom", Retryable: true}
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"x"}`)),
		runlettest.ErrorReply(perr),
	)
	res, err := rt.Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{weatherTool()}}, "go", runlet.WithSession("s"))
	var got *runlet.ProviderError
	if !errors.As(err, &got) || got.StatusCode != 500 {
		t.Fatalf("err = %v", err)
	}
	if res.Status != runlet.StateFailed || len(res.Messages) != 3 {
		t.Fatalf("partial result %+v", res)
	}
	hist, _ := store.LoadSession(context.Background(), "s")
	// The first turn (input, call, result) completed and was stored; nothing after it.
	if len(hist) != 3 {
		t.Fatalf("session has %d messages", len(hist))
	}
	if _, ok := hist[2].Parts[0].(runlet.ToolResultPart); !ok {
		t.Fatalf("last stored message is not the tool result: %+v", hist[2])
	}
}

func TestRunOptionsOverrideAgent(t *testing.T) {
	model := runlettest.NewModel(runlettest.TextReply("ok"))
	temp := 0.2
	agent := &runlet.Agent{Model: model, Options: map[string]any{"a": 1, "b": 1}, Settings: runlet.Settings{MaxOutputTokens: 100}}
	_, err := runlet.NewRuntime().Run(context.Background(), agent, "",
		runlet.WithInput(runlet.Message{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.TextPart{Text: "what is this?"}, runlet.ImagePart{URL: "https://example.com/cat.png"},
		}}),
		runlet.WithHistory(runlet.UserText("earlier"), runlet.AssistantText("reply")),
		runlet.WithOptions(map[string]any{"b": 2}),
		runlet.WithSettings(runlet.Settings{Temperature: &temp}),
		runlet.WithRunID("run-42"),
	)
	if err != nil {
		t.Fatal(err)
	}
	req := model.Requests()[0]
	if req.Options["a"] != 1 || req.Options["b"] != 2 || agent.Options["b"] != 1 {
		t.Fatalf("options %v (agent %v)", req.Options, agent.Options)
	}
	if req.MaxOutputTokens != 100 || req.Temperature == nil || *req.Temperature != 0.2 {
		t.Fatalf("settings %+v", req.Settings)
	}
	if len(req.Messages) != 3 || req.Messages[0].Text() != "earlier" {
		t.Fatalf("messages %+v", req.Messages)
	}
	if _, ok := req.Messages[2].Parts[1].(runlet.ImagePart); !ok {
		t.Fatal("image part lost")
	}
}

func TestNoModel(t *testing.T) {
	res, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{}, "hi")
	if !errors.Is(err, runlet.ErrNoModel) || res == nil {
		t.Fatalf("res=%v err=%v", res, err)
	}
}

func TestStateThroughContext(t *testing.T) {
	counter := runlet.NewTool("count", "", func(ctx context.Context, _ struct{}) (string, error) {
		n := 0
		if b, err := runlet.GetState(ctx, "n"); err == nil {
			n = int(b[0])
		} else if !errors.Is(err, runlet.ErrNotFound) {
			return "", err
		}
		n++
		return fmt.Sprint(n), runlet.SetState(ctx, "n", []byte{byte(n)})
	})
	rt := runlet.NewRuntime(runlet.WithStore(runlet.NewMemoryStore()))
	for want := 1; want <= 2; want++ {
		model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c", "count", `{}`)), runlettest.TextReply("ok"))
		res, err := rt.Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{counter}}, "count", runlet.WithSession("s"))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Messages[2].Parts[0].(runlet.ToolResultPart).Content; got != fmt.Sprint(want) {
			t.Fatalf("count = %s, want %d", got, want)
		}
	}
	// Without a session the state functions say so.
	if _, err := runlet.GetState(context.Background(), "n"); !errors.Is(err, runlet.ErrNoSession) {
		t.Fatalf("err = %v", err)
	}
}

func TestBadAgentTools(t *testing.T) {
	model := runlettest.NewModel(runlettest.TextReply("never"))
	for name, tools := range map[string][]runlet.Tool{
		"duplicate": {weatherTool(), weatherTool()},
		"nil":       {nil},
	} {
		res, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Model: model, Tools: tools}, "hi")
		if err == nil || res == nil || res.Status != runlet.StateFailed {
			t.Errorf("%s: res=%+v err=%v", name, res, err)
		}
	}
	if len(model.Requests()) != 0 {
		t.Fatal("the model was called")
	}
}

func TestRunFailedErrorType(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&runlet.ProviderError{StatusCode: 503, Message: "down"}, "503"},
		{&runlet.ProviderError{Type: "overloaded_error", Message: "busy"}, "overloaded_error"},
		{&runlet.ProviderError{Message: "cut", Err: runlet.ErrStreamIncomplete}, "stream_incomplete"},
		{context.DeadlineExceeded, "timeout"},
		{errors.New("boom"), "error"},
	}
	for _, tc := range cases {
		model := runlettest.NewModel(runlettest.ErrorReply(tc.err))
		evs, err := collect(t, runlet.NewRuntime().Stream(context.Background(), &runlet.Agent{Model: model}, "hi"))
		if err == nil {
			t.Fatal("no error")
		}
		if got := evs[len(evs)-1].(*runlet.RunFailed).ErrorType; got != tc.want {
			t.Errorf("%v: error type %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestToolCallsWithoutIDsGetUniqueOnes(t *testing.T) {
	noID := runlettest.ToolCallReply(runlettest.Call("", "get_weather", `{"city":"A"}`), runlettest.Call("", "get_weather", `{"city":"B"}`))
	model := runlettest.NewModel(noID, noID, runlettest.TextReply("ok"))
	res, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{weatherTool()}}, "go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range res.Messages {
		for _, c := range m.ToolCalls() {
			if c.ID == "" || seen[c.ID] {
				t.Fatalf("call ID %q empty or repeated", c.ID)
			}
			seen[c.ID] = true
		}
	}
	// Each result names its call.
	for _, i := range []int{1, 3} {
		calls := res.Messages[i].ToolCalls()
		for k, p := range res.Messages[i+1].Parts {
			if p.(runlet.ToolResultPart).CallID != calls[k].ID {
				t.Fatalf("result %d does not name call %s", k, calls[k].ID)
			}
		}
	}
	if len(seen) != 4 {
		t.Fatalf("%d ids", len(seen))
	}
}

// A session on a Runtime without a session store fails before any model
// call, saying how to add one, instead of starting from an empty history
// that nothing keeps.
func TestSessionWithoutStoreFailsFirst(t *testing.T) {
	model := runlettest.NewModel(runlettest.TextReply("hi"))
	res, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Model: model}, "hello", runlet.WithSession("s"))
	if !errors.Is(err, runlet.ErrNoSession) || !strings.Contains(err.Error(), "WithStore(runlet.NewMemoryStore())") {
		t.Fatalf("err = %v", err)
	}
	if len(model.Requests()) != 0 || res == nil || res.Status != runlet.StateFailed {
		t.Fatalf("%d model calls, result %+v", len(model.Requests()), res)
	}
	// Without a session, the same Runtime runs.
	if _, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Model: model}, "hello"); err != nil {
		t.Fatal(err)
	}
}

// A tool abandoned after its timeout may still return while a later call
// runs: the later call gets its own result, never the abandoned one's.
func TestAbandonedToolDoesNotAnswerALaterCall(t *testing.T) {
	release, stubbornDone := make(chan struct{}), make(chan struct{})
	stubborn := runlet.NewTool("stubborn", "ignores its context", func(ctx context.Context, _ struct{}) (string, error) {
		defer close(stubbornDone)
		<-release
		return "late", nil
	}, runlet.WithToolTimeout(10*time.Millisecond))
	fast := runlet.NewTool("fast", "lets the stubborn tool return, then answers", func(ctx context.Context, _ struct{}) (string, error) {
		close(release)
		<-stubbornDone
		return "fast", nil
	})
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "stubborn", `{}`)),
		runlettest.ToolCallReply(runlettest.Call("c2", "fast", `{}`)),
		runlettest.ToolCallReply(runlettest.Call("c3", "fast2", `{}`)),
		runlettest.TextReply("done"),
	)
	fast2 := runlet.NewTool("fast2", "answers", func(ctx context.Context, _ struct{}) (string, error) { return "fast2", nil })
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{stubborn, fast, fast2}}
	res, err := runlet.NewRuntime(runlet.WithLogger(discardLogger())).Run(context.Background(), agent, "go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Messages {
		if m.Role == runlet.RoleTool {
			got = append(got, m.Parts[0].(runlet.ToolResultPart).Content)
		}
	}
	want := []string{"Error: the tool timed out after 10ms.", "fast", "fast2"}
	if !slices.Equal(got, want) {
		t.Fatalf("results %q, want %q", got, want)
	}
}
