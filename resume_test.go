package runlet_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

type deleteIn struct {
	Path string `json:"path"`
}

func approvalAgent(model runlet.Model, deleted *[]string, mu *sync.Mutex) *runlet.Agent {
	del := runlet.NewTool("delete_file", "Deletes a file.", func(ctx context.Context, in deleteIn) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		*deleted = append(*deleted, in.Path)
		return "deleted " + in.Path, nil
	}, runlet.WithApproval())
	return &runlet.Agent{Name: "ops", Model: model, Tools: []runlet.Tool{del, weatherTool()}}
}

func script() []runlettest.Reply {
	return []runlettest.Reply{
		runlettest.ToolCallReply(
			runlettest.Call("w", "get_weather", `{"city":"Rome"}`),
			runlettest.Call("d1", "delete_file", `{"path":"/tmp/a"}`),
			runlettest.Call("d2", "delete_file", `{"path":"/tmp/b"}`),
		),
		runlettest.TextReply("Done."),
	}
}

func TestInterruptAndResumeInAnotherRuntime(t *testing.T) {
	store := runlet.NewMemoryStore()
	var deleted []string
	var mu sync.Mutex
	model := runlettest.NewModel(script()...)
	agent := approvalAgent(model, &deleted, &mu)

	evs, err := collect(t, runlet.NewRuntime(runlet.WithStore(store)).Stream(context.Background(), agent, "clean up", runlet.WithSession("s")))
	if err != nil {
		t.Fatal(err)
	}
	intr, ok := evs[len(evs)-1].(*runlet.RunInterrupted)
	if !ok {
		t.Fatalf("last event %T", evs[len(evs)-1])
	}
	if len(intr.Pending) != 2 || intr.Pending[0].ID != "d1" || intr.Result.Status != runlet.StateInterrupted {
		t.Fatalf("interrupted = %+v", intr)
	}
	if len(deleted) != 0 {
		t.Fatal("a call needing approval ran")
	}
	runID := intr.Result.RunID

	// A second runtime (another process, in real life) resumes it.
	rt2 := runlet.NewRuntime(runlet.WithStore(store))
	res, err := rt2.Resume(context.Background(), agent, runID,
		runlet.ApproveWithArguments("d1", json.RawMessage(`{"path":"/tmp/a.bak"}`)),
		runlet.Reject("d2", "keep b"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runlet.StateFinished || res.Output != "Done." || res.RunID != runID {
		t.Fatalf("resumed result %+v", res)
	}
	if strings.Join(deleted, ",") != "/tmp/a.bak" {
		t.Fatalf("deleted %v", deleted)
	}
	// The model saw all three results, in its order.
	results := model.Requests()[1].Messages[2].Parts
	w, d1, d2 := results[0].(runlet.ToolResultPart), results[1].(runlet.ToolResultPart), results[2].(runlet.ToolResultPart)
	if w.Content != "sunny in Rome" || d1.Content != "deleted /tmp/a.bak" || !d2.IsError || !strings.Contains(d2.Content, "keep b") {
		t.Fatalf("results %+v %+v %+v", w, d1, d2)
	}
	// The session holds the whole run, complete turns only.
	hist, _ := store.LoadSession(context.Background(), "s")
	if len(hist) != 4 {
		t.Fatalf("session has %d messages", len(hist))
	}

	// Resuming twice fails and changes nothing.
	if _, err := rt2.Resume(context.Background(), agent, runID, runlet.Approve("d1"), runlet.Approve("d2")); !errors.Is(err, runlet.ErrNotFound) {
		t.Fatalf("second resume: %v", err)
	}
}

func TestResumeSameResultAsUninterrupted(t *testing.T) {
	// Uninterrupted: a hook auto-approves nothing, the tool needs no approval.
	var d1 []string
	var mu sync.Mutex
	plain := approvalAgent(runlettest.NewModel(script()...), &d1, &mu)
	plain.Tools[0] = runlet.NewTool("delete_file", "Deletes a file.", func(ctx context.Context, in deleteIn) (string, error) {
		return "deleted " + in.Path, nil
	})
	want, err := runlet.NewRuntime().Run(context.Background(), plain, "clean up")
	if err != nil {
		t.Fatal(err)
	}
	store := runlet.NewMemoryStore()
	var d2 []string
	agent := approvalAgent(runlettest.NewModel(script()...), &d2, &mu)
	res, err := runlet.NewRuntime(runlet.WithStore(store)).Run(context.Background(), agent, "clean up", runlet.WithRunID("r1"))
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	got, err := runlet.NewRuntime(runlet.WithStore(store)).Resume(context.Background(), agent, "r1", runlet.Approve("d1"), runlet.Approve("d2"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Output != want.Output || len(got.Messages) != len(want.Messages) || got.Turns != want.Turns || got.Usage != want.Usage {
		t.Fatalf("resumed %+v\nwant %+v", got, want)
	}
	a, _ := json.Marshal(got.Messages)
	b, _ := json.Marshal(want.Messages)
	if string(a) != string(b) {
		t.Fatalf("messages differ:\n%s\n%s", a, b)
	}
}

func TestResumeBadDecisionsChangeNothing(t *testing.T) {
	store := runlet.NewMemoryStore()
	var deleted []string
	var mu sync.Mutex
	agent := approvalAgent(runlettest.NewModel(script()...), &deleted, &mu)
	rt := runlet.NewRuntime(runlet.WithStore(store))
	if _, err := rt.Run(context.Background(), agent, "clean", runlet.WithRunID("r")); err != nil {
		t.Fatal(err)
	}
	for _, ds := range [][]runlet.Decision{
		{runlet.Approve("d1"), runlet.Approve("nope")},
		{runlet.Approve("d1")},
		{runlet.Approve("d1"), runlet.Approve("d1")},
		{runlet.Approve("d1"), runlet.ApproveWithArguments("d2", json.RawMessage(`{bad`))},
	} {
		if _, err := rt.Resume(context.Background(), agent, "r", ds...); err == nil {
			t.Fatalf("decisions %+v accepted", ds)
		}
	}
	if _, err := store.LoadCheckpoint(context.Background(), "r"); err != nil {
		t.Fatalf("checkpoint consumed: %v", err)
	}
	if _, err := rt.Resume(context.Background(), agent, "missing"); !errors.Is(err, runlet.ErrNotFound) {
		t.Fatalf("unknown run: %v", err)
	}
}

func TestConcurrentResumeOnlyOneWins(t *testing.T) {
	store := runlet.NewMemoryStore()
	var deleted []string
	var mu sync.Mutex
	model := runlettest.NewModel(script()...)
	model.Push(runlettest.TextReply("Done."), runlettest.TextReply("Done."), runlettest.TextReply("Done."))
	agent := approvalAgent(model, &deleted, &mu)
	rt := runlet.NewRuntime(runlet.WithStore(store))
	if _, err := rt.Run(context.Background(), agent, "clean", runlet.WithRunID("r")); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := rt.Resume(context.Background(), agent, "r", runlet.Approve("d1"), runlet.Approve("d2")); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, runlet.ErrNotFound) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || len(deleted) != 2 {
		t.Fatalf("wins=%d deleted=%v", wins.Load(), deleted)
	}
}

func TestHookRequestsApproval(t *testing.T) {
	store := runlet.NewMemoryStore()
	h := runlet.Hooks{BeforeToolCall: func(ctx context.Context, call *runlet.ToolCallPart) (*runlet.ToolResultPart, error) {
		if strings.Contains(string(call.Arguments), "Paris") {
			return nil, runlet.ErrApprovalRequired
		}
		return nil, nil
	}}
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("p", "get_weather", `{"city":"Paris"}`)), runlettest.TextReply("ok"))
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{weatherTool()}}
	rt := runlet.NewRuntime(runlet.WithStore(store), runlet.WithHooks(h))
	res, err := rt.Run(context.Background(), agent, "go")
	if err != nil || res.Status != runlet.StateInterrupted || res.Pending[0].ID != "p" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	evs, err := collect(t, rt.ResumeStream(context.Background(), agent, res.RunID, runlet.Approve("p")))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := evs[0].(*runlet.RunResumed); !ok {
		t.Fatalf("first event %T", evs[0])
	}
	fin := evs[len(evs)-1].(*runlet.RunFinished)
	if fin.Result.Output != "ok" || fin.Result.Messages[2].Parts[0].(runlet.ToolResultPart).Content != "sunny in Paris" {
		t.Fatalf("finished %+v", fin.Result)
	}
}

func TestResumeAfterCommittedTurnsInSession(t *testing.T) {
	store := runlet.NewMemoryStore()
	var deleted []string
	var mu sync.Mutex
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("w", "get_weather", `{"city":"Rome"}`)),
		runlettest.ToolCallReply(runlettest.Call("d", "delete_file", `{"path":"/x"}`)),
		runlettest.TextReply("Done."),
	)
	agent := approvalAgent(model, &deleted, &mu)
	ctx := context.Background()
	// An earlier exchange in the session.
	if err := store.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("hi"), runlet.AssistantText("hello")}); err != nil {
		t.Fatal(err)
	}
	res, err := runlet.NewRuntime(runlet.WithStore(store)).Run(ctx, agent, "go", runlet.WithSession("s"))
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if hist, _ := store.LoadSession(ctx, "s"); len(hist) != 5 { // 2 earlier + input, call, result
		t.Fatalf("session before resume: %d messages", len(hist))
	}
	res, err = runlet.NewRuntime(runlet.WithStore(store)).Resume(ctx, agent, res.RunID, runlet.Approve("d"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 6 || res.Messages[0].Text() != "go" || res.Turns != 3 {
		t.Fatalf("resumed result has %d messages, %d turns", len(res.Messages), res.Turns)
	}
	hist, _ := store.LoadSession(ctx, "s")
	if len(hist) != 8 || hist[7].Text() != "Done." {
		t.Fatalf("session after resume: %d messages", len(hist))
	}
	// The last model call saw the whole conversation.
	if got := len(model.Requests()[2].Messages); got != 7 {
		t.Fatalf("last request had %d messages", got)
	}
}

// interruptible returns a scripted model and an agent whose delete_file
// tool needs approval, and the store the run checkpoints to.
func interruptible(replies ...runlettest.Reply) (runlet.Store, *runlettest.Model, *runlet.Agent) {
	var deleted []string
	var mu sync.Mutex
	model := runlettest.NewModel(replies...)
	return runlet.NewMemoryStore(), model, approvalAgent(model, &deleted, &mu)
}

// A resumed run is the same run: in another Runtime with other limits, its
// requests carry the run's settings and options, and its limits count what
// happened before the interruption.
func TestResumeKeepsSettingsLimitsAndCounts(t *testing.T) {
	store, model, agent := interruptible(
		runlettest.ToolCallReply(runlettest.Call("d", "delete_file", `{"path":"/x"}`)),
		runlettest.ToolCallReply(runlettest.Call("w", "get_weather", `{"city":"Rome"}`)),
		runlettest.TextReply("never asked"),
	)
	temp := 0.25
	ctx := context.Background()
	res, err := runlet.NewRuntime(runlet.WithStore(store)).Run(ctx, agent, "go",
		runlet.WithLimits(runlet.UsageLimits{Requests: 2}),
		runlet.WithSettings(runlet.Settings{Temperature: &temp, MaxOutputTokens: 77}),
		runlet.WithOptions(map[string]any{"seed": 7}))
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	// The resuming runtime has no limits of its own: the run's still hold.
	res, err = runlet.NewRuntime(runlet.WithStore(store)).Resume(ctx, agent, res.RunID, runlet.Approve("d"))
	var pe *runlet.PolicyError
	if !errors.As(err, &pe) || pe.Policy != "usage_limit:requests" {
		t.Fatalf("resumed run with 2 requests allowed, 1 made before: err=%v", err)
	}
	reqs := model.Requests()
	if len(reqs) != 2 || res.Usage.Requests != 2 || res.Turns != 2 {
		t.Fatalf("%d requests, usage %+v, %d turns", len(reqs), res.Usage, res.Turns)
	}
	got := reqs[1]
	if got.Temperature == nil || *got.Temperature != temp || got.MaxOutputTokens != 77 || got.Options["seed"] != 7.0 { // JSON numbers after the checkpoint
		t.Fatalf("resumed request settings %+v options %v", got.Settings, got.Options)
	}
}

func TestResumeCountsToolCallsAndMaxTurns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opt    runlet.RuntimeOption
		policy string
	}{
		{"tool calls", runlet.WithLimits(runlet.UsageLimits{ToolCalls: 2}), "usage_limit:tool_calls"},
		{"max turns", runlet.WithMaxTurns(2), "max_turns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _, agent := interruptible(
				runlettest.ToolCallReply(runlettest.Call("w", "get_weather", `{"city":"Rome"}`)),
				runlettest.ToolCallReply(runlettest.Call("d", "delete_file", `{"path":"/x"}`)),
				runlettest.ToolCallReply(runlettest.Call("w2", "get_weather", `{"city":"Oslo"}`)),
				runlettest.TextReply("never asked"),
			)
			ctx := context.Background()
			res, err := runlet.NewRuntime(runlet.WithStore(store), tc.opt).Run(ctx, agent, "go")
			if err != nil || res.Status != runlet.StateInterrupted {
				t.Fatalf("res=%+v err=%v", res, err)
			}
			_, err = runlet.NewRuntime(runlet.WithStore(store)).Resume(ctx, agent, res.RunID, runlet.Approve("d"))
			var pe *runlet.PolicyError
			if !errors.As(err, &pe) || pe.Policy != tc.policy {
				t.Fatalf("err = %v, want policy %s", err, tc.policy)
			}
		})
	}
}

// A checkpoint written before limits were recorded resumes with the
// resuming Runtime's limits.
func TestResumeOldCheckpoint(t *testing.T) {
	ctx := context.Background()
	store, model, agent := interruptible(runlettest.TextReply("Done."))
	saveOldCheckpoint(t, store)
	res, err := runlet.NewRuntime(runlet.WithStore(store), runlet.WithLimits(runlet.UsageLimits{Requests: 2})).
		Resume(ctx, agent, "old", runlet.Approve("d"))
	if err != nil || res.Output != "Done." || res.Usage.Requests != 2 || res.Turns != 2 {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if model.Requests()[0].Options["seed"] != 3.0 {
		t.Fatalf("options %v", model.Requests()[0].Options)
	}
}

// saveOldCheckpoint saves the checkpoint of run "old" as written before
// limits, counts and costs were recorded, waiting for a decision on call "d".
func saveOldCheckpoint(t *testing.T, store runlet.Store) {
	t.Helper()
	old := `{"run_id":"old","turn":1,"history_len":0,
		"messages":[{"role":"user","parts":[{"type":"text","text":"go"}]},
		            {"role":"assistant","parts":[{"type":"tool_call","id":"d","name":"delete_file","arguments":{"path":"/x"}}]}],
		"pending":[{"type":"tool_call","id":"d","name":"delete_file","arguments":{"path":"/x"}}],
		"usage":{"input_tokens":10,"output_tokens":2,"total_tokens":12,"requests":1},
		"options":{"seed":3},"created_at":"2026-11-01T00:00:00Z"}`
	var cp runlet.Checkpoint
	if err := json.Unmarshal([]byte(old), &cp); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveCheckpoint(context.Background(), &cp); err != nil {
		t.Fatal(err)
	}
}
