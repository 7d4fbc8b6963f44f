package temporal

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// TestSessionStateInActivities: a tool writes the session's state, the
// next turn's model-call hook and preparer read it, across activities; a
// retried model activity sees what its failed attempt wrote; a run of a
// Runtime on the same store sees it after.
func TestSessionStateInActivities(t *testing.T) {
	store := runlet.NewMemoryStore()
	ctx := context.Background()
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "remember", `{"city":"Paris"}`)),
		runlettest.ErrorReply(&runlet.ProviderError{Provider: "fake", StatusCode: 503, Retryable: true}),
		runlettest.TextReply("noted"),
	)
	remember := runlet.NewTool("remember", "Remembers a city.", func(ctx context.Context, in cityArgs) (string, error) {
		ri, ok := runlet.RunInfoFrom(ctx)
		if !ok || ri.SessionID != "s" || ri.RunID != "run-s" || ri.Turn != 1 || ri.Agent != "a" {
			return "", errors.New("no run info")
		}
		if err := runlet.SetState(ctx, "city", []byte(in.City)); err != nil {
			return "", err
		}
		return "ok", nil
	})
	var mu sync.Mutex
	var seen []string // what the model-call hook read, per attempt
	hooks := runlet.Hooks{BeforeModelCall: func(ctx context.Context, _ *runlet.ModelRequest) error {
		n := 0
		if v, err := runlet.GetState(ctx, "attempts"); err == nil {
			n, _ = strconv.Atoi(string(v))
		}
		if err := runlet.SetState(ctx, "attempts", []byte(strconv.Itoa(n+1))); err != nil {
			return err
		}
		city, err := runlet.GetState(ctx, "city")
		mu.Lock()
		seen = append(seen, string(city)+"/"+strconv.Itoa(n)+"/"+errString(err))
		mu.Unlock()
		return nil
	}}
	var prepared []string
	prep := runlet.PreparerFunc(func(ctx context.Context, req *runlet.ModelRequest) error {
		v, _ := runlet.GetState(ctx, "city")
		mu.Lock()
		prepared = append(prepared, string(v))
		mu.Unlock()
		return nil
	})
	d := mustNew(t, Config{
		Agents:    []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{remember}}},
		Sessions:  store,
		Hooks:     []runlet.Hooks{hooks},
		Preparers: []runlet.Preparer{prep},
	})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "remember Paris", SessionID: "s", RunID: "run-s"})
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if got := toolResults(res.Messages[2])[0]; got.Content != "ok" {
		t.Fatalf("tool result %+v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/0/" + errString(runlet.ErrNotFound), "Paris/1/", "Paris/2/"}
	if jsonString(seen) != jsonString(want) {
		t.Fatalf("the model-call hook read %q, want %q", seen, want)
	}
	if jsonString(prepared) != jsonString([]string{"", "Paris", "Paris"}) {
		t.Fatalf("the preparer read %q", prepared)
	}
	// A Runtime on the same store goes on with the same state.
	var got []byte
	probe := runlet.NewTool("probe", "Reads the state.", func(ctx context.Context, _ struct{}) (string, error) {
		var err error
		got, err = runlet.GetState(ctx, "city")
		return "", err
	})
	m2 := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("p", "probe", `{}`)), runlettest.TextReply("."))
	if _, err := runlet.NewRuntime(runlet.WithStore(store)).Run(ctx, &runlet.Agent{Name: "a", Model: m2, Tools: []runlet.Tool{probe}}, "x", runlet.WithSession("s")); err != nil || string(got) != "Paris" {
		t.Fatalf("in-process run read %q, %v", got, err)
	}
}

// TestStateWithoutSession: a run without a SessionID has no state, as in
// Runlet (runlet.ErrNoSession), and its tools still get their RunInfo.
func TestStateWithoutSession(t *testing.T) {
	var stateErr error
	var info runlet.RunInfo
	tool := runlet.NewTool("t", "x", func(ctx context.Context, _ struct{}) (string, error) {
		info, _ = runlet.RunInfoFrom(ctx)
		_, stateErr = runlet.GetState(ctx, "k")
		return "ok", nil
	})
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c", "t", `{}`)), runlettest.TextReply("."))
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{tool}}}, Sessions: runlet.NewMemoryStore()})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "x", RunID: "r1"})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(stateErr, runlet.ErrNoSession) || info.RunID != "r1" || info.Turn != 1 {
		t.Fatalf("state error %v, run info %+v", stateErr, info)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
