package temporal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

func TestRunToolLoopParallelCallsInModelOrder(t *testing.T) {
	var c counter
	model := runlettest.NewModel(
		runlettest.ToolCallReply(
			runlettest.Call("c1", "get_weather", `{"city":"Paris"}`),
			runlettest.Call("c2", "get_weather", `{"city":"Nowhere"}`),
			runlettest.Call("c3", "get_weather", `{"city":"Crash"}`),
			runlettest.Call("c4", "no_such_tool", `{}`),
			runlettest.Call("c5", "get_weather", `{"city":`),
			runlettest.Call("c6", "get_weather", `{"town":"Oslo"}`),
		),
		runlettest.TextReply("done"),
	)
	rec := &recorder{}
	d := mustNew(t, Config{
		Agents:    []*runlet.Agent{{Name: "a", Instructions: "be brief", Model: model, Tools: []runlet.Tool{weatherTool(&c)}}},
		Observers: []runlet.Observer{rec},
	})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "weather?", RunID: "run-1"})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != runlet.StateFinished || res.Output != "done" || res.Turns != 2 || res.RunID != "run-1" {
		t.Fatalf("result = %+v", res)
	}
	if res.Usage.Requests != 2 || res.Usage.TotalTokens != 30 {
		t.Errorf("usage = %+v, want 2 requests, 30 tokens", res.Usage)
	}
	if len(res.Messages) != 4 {
		t.Fatalf("messages = %d, want input, calls, results, answer", len(res.Messages))
	}
	got := toolResults(res.Messages[2])
	want := []struct {
		id, content string
		isErr       bool
	}{
		{"c1", "sunny in Paris", false},
		{"c2", "Error: no such city", true},
		{"c3", "Error: the tool crashed", true},
		{"c4", `Error: unknown tool "no_such_tool". Available tools: get_weather.`, true},
		{"c5", "Error: the arguments are not valid JSON", true},
		{"c6", "Error: invalid arguments for get_weather", true},
	}
	if len(got) != len(want) {
		t.Fatalf("results = %+v", got)
	}
	for i, w := range want {
		if got[i].CallID != w.id || !strings.HasPrefix(got[i].Content, w.content) || got[i].IsError != w.isErr {
			t.Errorf("result %d = %+v, want %s %q error=%v", i, got[i], w.id, w.content, w.isErr)
		}
	}
	if c.get("Paris") != 1 || c.get("Oslo") != 0 {
		t.Errorf("executions = %v", c.n)
	}
	reqs := model.Requests()
	if len(reqs) != 2 || reqs[0].Instructions != "be brief" || len(reqs[0].Tools) != 1 || len(reqs[1].Messages) != 3 {
		t.Errorf("requests: %d, first %+v", len(reqs), reqs[0])
	}

	// Events: the workflow's are numbered in order; the activities' carry
	// the run ID and the turn.
	evs := rec.all()
	if _, ok := evs[0].(*runlet.RunStarted); !ok {
		t.Errorf("first event %T", evs[0])
	}
	if _, ok := evs[len(evs)-1].(*runlet.RunFinished); !ok {
		t.Errorf("last event %T", evs[len(evs)-1])
	}
	var lastSeq int64
	var kinds = map[string]int{}
	for _, ev := range evs {
		h := ev.Header()
		if h.RunID != "run-1" || h.Agent != "a" {
			t.Errorf("%T header %+v", ev, h)
		}
		switch ev.(type) {
		case *runlet.ModelStarted, *runlet.ModelFinished:
			kinds["model"]++
			if h.Seq != 0 || h.Turn == 0 {
				t.Errorf("%T header %+v", ev, h)
			}
		case *runlet.ToolStarted, *runlet.ToolFinished:
			kinds["tool"]++
			if h.Turn != 1 {
				t.Errorf("%T header %+v", ev, h)
			}
		default:
			if h.Seq <= lastSeq {
				t.Errorf("%T seq %d after %d", ev, h.Seq, lastSeq)
			}
			lastSeq = h.Seq
		}
	}
	if kinds["model"] != 4 || kinds["tool"] != 12 {
		t.Errorf("events: %v", kinds)
	}
}

func TestMaxTurns(t *testing.T) {
	var c counter
	model := &runlettest.Model{Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
		return runlettest.ToolCallReply(runlettest.Call("", "get_weather", `{"city":"Rome"}`))
	}}
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{weatherTool(&c)}, MaxTurns: 5}}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "loop", MaxTurns: 3})
	app, fd := failure(t, e.GetWorkflowError())
	if app.Type() != ErrTypePolicy || fd.Policy != "max_turns" || !app.NonRetryable() {
		t.Fatalf("error %v type %s policy %q", app, app.Type(), fd.Policy)
	}
	if fd.Result == nil || fd.Result.Turns != 3 || fd.Result.Status != runlet.StateFailed || c.get("Rome") != 3 {
		t.Fatalf("partial result %+v, executions %d", fd.Result, c.get("Rome"))
	}
	// Calls without IDs got one unique in the run.
	seen := map[string]bool{}
	for _, m := range fd.Result.Messages {
		for _, call := range m.ToolCalls() {
			if call.ID == "" || seen[call.ID] {
				t.Errorf("call ID %q", call.ID)
			}
			seen[call.ID] = true
		}
	}
}

func TestUsageLimits(t *testing.T) {
	for _, tc := range []struct {
		limits runlet.UsageLimits
		policy string
		turns  int
	}{
		{runlet.UsageLimits{TotalTokens: 20}, "usage_limit:total_tokens", 2},
		{runlet.UsageLimits{Requests: 1}, "usage_limit:requests", 1},
		{runlet.UsageLimits{ToolCalls: 1}, "usage_limit:tool_calls", 2},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			var c counter
			model := &runlettest.Model{Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
				return runlettest.ToolCallReply(runlettest.Call("", "get_weather", `{"city":"Rome"}`))
			}}
			d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{weatherTool(&c)}}}})
			e := env(t, d)
			e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "loop", Limits: tc.limits})
			_, fd := failure(t, e.GetWorkflowError())
			if fd.Policy != tc.policy || fd.Result.Turns != tc.turns {
				t.Fatalf("policy %q turns %d, want %q %d", fd.Policy, fd.Result.Turns, tc.policy, tc.turns)
			}
		})
	}
}

func TestNonRetryableProviderErrorIsNotRetried(t *testing.T) {
	model := runlettest.NewModel(runlettest.ErrorReply(&runlet.ProviderError{Provider: "fake", StatusCode: 400, Message: "bad request"}))
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model}}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "hi"})
	app, fd := failure(t, e.GetWorkflowError())
	if app.Type() != ErrTypeProvider || !strings.Contains(app.Error(), "HTTP 400") || fd.Result == nil {
		t.Fatalf("error %v (%s), result %+v", app, app.Type(), fd.Result)
	}
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("model called %d times, want 1 (no retry)", n)
	}
}

func TestRetryableProviderErrorHonoursRetryAfter(t *testing.T) {
	model := runlettest.NewModel(
		runlettest.ErrorReply(&runlet.ProviderError{Provider: "fake", StatusCode: 429, Retryable: true, RetryAfter: 42 * time.Second}),
		runlettest.ErrorReply(&runlet.ProviderError{Provider: "fake", StatusCode: 503, Retryable: true}),
		runlettest.TextReply("ok"),
	)
	rec := &recorder{}
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model}}, Observers: []runlet.Observer{rec}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "hi"})
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil || res.Output != "ok" {
		t.Fatalf("result %+v, %v", res, err)
	}
	if n := len(model.Requests()); n != 3 {
		t.Fatalf("model called %d times, want 3", n)
	}
	evs := rec.all()
	took := evs[len(evs)-1].Header().Time.Sub(evs[0].Header().Time)
	if took < 42*time.Second {
		t.Fatalf("run took %v of workflow time, want at least the 42 s Retry-After", took)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	model := &runlettest.Model{Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
		return runlettest.ErrorReply(&runlet.ProviderError{StatusCode: 500, Retryable: true})
	}}
	d := mustNew(t, Config{
		Agents:        []*runlet.Agent{{Name: "a", Model: model}},
		ModelActivity: ActivityOptions{Retry: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3}},
	})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "hi"})
	app, _ := failure(t, e.GetWorkflowError())
	if app.Type() != ErrTypeProvider || len(model.Requests()) != 3 {
		t.Fatalf("error %v, %d calls", app, len(model.Requests()))
	}
}

func TestHooksRunInActivities(t *testing.T) {
	var c counter
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`), runlettest.Call("c2", "get_weather", `{"city":"Lima"}`)),
		runlettest.TextReply("done"),
	)
	hooks := runlet.Hooks{
		BeforeModelCall: func(_ context.Context, req *runlet.ModelRequest) error {
			req.Instructions += " (edited)"
			return nil
		},
		BeforeToolCall: func(_ context.Context, call *runlet.ToolCallPart) (*runlet.ToolResultPart, error) {
			if strings.Contains(string(call.Arguments), "Lima") {
				return nil, runlet.Deny("not there")
			}
			return nil, nil
		},
		AfterToolCall: func(_ context.Context, _ runlet.ToolCallPart, res *runlet.ToolResultPart) error {
			res.Content += "!"
			return nil
		},
	}
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Instructions: "hi", Model: model, Tools: []runlet.Tool{weatherTool(&c)}}}, Hooks: []runlet.Hooks{hooks}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "x"})
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	got := toolResults(res.Messages[2])
	if got[0].Content != "sunny in Paris!" || got[1].Content != "Error: call denied: not there!" || c.get("Lima") != 0 {
		t.Fatalf("results %+v", got)
	}
	if model.Requests()[0].Instructions != "hi (edited)" {
		t.Fatalf("instructions %q", model.Requests()[0].Instructions)
	}
}

func TestHookErrorFailsTheRun(t *testing.T) {
	model := runlettest.NewModel(runlettest.TextReply("x"))
	hooks := runlet.Hooks{BeforeModelCall: func(context.Context, *runlet.ModelRequest) error { return errors.New("no") }}
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model}}, Hooks: []runlet.Hooks{hooks}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "x"})
	_, fd := failure(t, e.GetWorkflowError())
	if fd.Policy != "hook:BeforeModelCall" {
		t.Fatalf("policy %q", fd.Policy)
	}
}

func TestUnknownAgent(t *testing.T) {
	d := mustNew(t, Config{})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "ghost", Input: "x"})
	var app *temporal.ApplicationError
	if err := e.GetWorkflowError(); !errors.As(err, &app) || app.Type() != ErrTypeUnknownAgent {
		t.Fatalf("error %v", err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	m := runlettest.NewModel()
	for _, cfg := range []Config{
		{Agents: []*runlet.Agent{nil}},
		{Agents: []*runlet.Agent{{Model: m}}},
		{Agents: []*runlet.Agent{{Name: "a"}}},
		{Agents: []*runlet.Agent{{Name: "a", Model: m}, {Name: "a", Model: m}}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

func TestSessionContinuedAndWrittenBack(t *testing.T) {
	var c counter
	store := runlet.NewMemoryStore()
	ctx := context.Background()
	prior := []runlet.Message{runlet.UserText("my name is Ann"), runlet.AssistantText("hi Ann")}
	if err := store.AppendSession(ctx, "s1", 0, prior); err != nil {
		t.Fatal(err)
	}
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`)),
		runlettest.TextReply("sunny, Ann"),
	)
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{weatherTool(&c)}}}, Sessions: store})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "weather?", SessionID: "s1"})
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if got := len(model.Requests()[0].Messages); got != 3 {
		t.Errorf("first request has %d messages, want the session's 2 and the input", got)
	}
	hist, _ := store.LoadSession(ctx, "s1")
	if len(hist) != 2+len(res.Messages) || hist[len(hist)-1].Text() != "sunny, Ann" {
		t.Fatalf("session has %d messages: %s", len(hist), jsonString(hist))
	}
	// The same session goes on in process.
	model.Push(runlettest.TextReply("bye Ann"))
	rt := runlet.NewRuntime(runlet.WithStore(store))
	if _, err := rt.Run(ctx, &runlet.Agent{Name: "a", Model: model}, "bye", runlet.WithSession("s1")); err != nil {
		t.Fatal(err)
	}
	if reqs := model.Requests(); len(reqs[len(reqs)-1].Messages) != len(hist)+1 {
		t.Errorf("in-process run saw %d messages, want %d", len(reqs[len(reqs)-1].Messages), len(hist)+1)
	}
}

func TestSessionWithoutStoreFails(t *testing.T) {
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: runlettest.NewModel()}}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "x", SessionID: "s"})
	app, _ := failure(t, e.GetWorkflowError())
	if !strings.Contains(app.Error(), "no session store") {
		t.Fatalf("error %v", app)
	}
}

var _ = testsuite.TestUpdateCallback{}

func TestAppendSessionIsIdempotent(t *testing.T) {
	store := runlet.NewMemoryStore()
	d := mustNew(t, Config{Sessions: store})
	ctx := context.Background()
	in := AppendInput{SessionID: "s", After: 0, Messages: []runlet.Message{runlet.UserText("a"), runlet.AssistantText("b")}}
	if err := d.appendSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	// A retry after a lost completion finds its messages in place.
	if err := d.appendSession(ctx, in); err != nil {
		t.Fatalf("repeated append: %v", err)
	}
	// Other messages at that place are a conflict, never retried.
	in.Messages = []runlet.Message{runlet.UserText("other")}
	var app *temporal.ApplicationError
	if err := d.appendSession(ctx, in); !errors.As(err, &app) || !app.NonRetryable() || !errors.Is(err, runlet.ErrConflict) {
		t.Fatalf("conflicting append: %v", err)
	}
	if hist, _ := store.LoadSession(ctx, "s"); len(hist) != 2 {
		t.Fatalf("session holds %d messages", len(hist))
	}
}

func TestFailedRunEvent(t *testing.T) {
	model := runlettest.NewModel(runlettest.ErrorReply(&runlet.ProviderError{Provider: "fake", StatusCode: 401, Message: "bad key"}))
	rec := &recorder{}
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model}}, Observers: []runlet.Observer{rec}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "hi"})
	evs := rec.all()
	f, ok := evs[len(evs)-1].(*runlet.RunFailed)
	if !ok || f.ErrorType != "401" || f.Error != "fake: HTTP 401 bad key" || f.Result == nil {
		t.Fatalf("last event %T %+v", evs[len(evs)-1], evs[len(evs)-1])
	}
}

// A forced tool choice ends once the run has called a tool, as in Runlet's
// loop: the next model activity asks with auto and the run ends with the
// answer; KeepToolChoice keeps forcing until max turns.
func TestForcedToolChoiceEnds(t *testing.T) {
	for _, keep := range []bool{false, true} {
		var c counter
		model := &runlettest.Model{Func: func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
			if req.ToolChoice.Mode == runlet.ToolChoiceRequired {
				return runlettest.ToolCallReply(runlettest.Call("", "get_weather", `{"city":"Rome"}`))
			}
			return runlettest.TextReply("Sunny.")
		}}
		agent := &runlet.Agent{Name: "a", Model: model, Tools: []runlet.Tool{weatherTool(&c)},
			ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}, KeepToolChoice: keep}
		e := env(t, mustNew(t, Config{Agents: []*runlet.Agent{agent}}))
		e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "weather?", MaxTurns: 3})
		if keep {
			if _, fd := failure(t, e.GetWorkflowError()); fd.Policy != "max_turns" || c.get("Rome") != 3 {
				t.Fatalf("kept: policy %q, %d calls", fd.Policy, c.get("Rome"))
			}
			continue
		}
		var res runlet.Result
		if err := e.GetWorkflowResult(&res); err != nil || res.Output != "Sunny." || c.get("Rome") != 1 {
			t.Fatalf("output %q err %v, %d calls", res.Output, err, c.get("Rome"))
		}
		if reqs := model.Requests(); len(reqs) != 2 || reqs[1].ToolChoice.Mode != runlet.ToolChoiceAuto {
			t.Fatalf("%d requests", len(reqs))
		}
	}
}

// RunInput.Settings carries the neutral reasoning setting to the model
// call; a level that is not one fails the run without calling the model.
func TestReasoningSetting(t *testing.T) {
	model := runlettest.NewModel(runlettest.TextReply("ok"))
	agent := &runlet.Agent{Name: "a", Model: model}
	e := env(t, mustNew(t, Config{Agents: []*runlet.Agent{agent}}))
	want := runlet.Reasoning{Effort: runlet.ReasoningHigh, Summary: true}
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "think", Settings: runlet.Settings{Reasoning: want}})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if reqs := model.Requests(); len(reqs) != 1 || reqs[0].Reasoning != want {
		t.Fatalf("requests %d", len(reqs))
	}

	e = env(t, mustNew(t, Config{Agents: []*runlet.Agent{agent}}))
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "think", Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: "hihg"}}})
	if err := e.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), `reasoning effort "hihg"`) {
		t.Fatalf("err = %v", err)
	}
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("%d model calls, want none for the invalid setting", n-1)
	}
}
