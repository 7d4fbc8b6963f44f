package temporal

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// pausedReply is a response the provider paused in the middle of a hosted
// web search (Anthropic's pause_turn).
func pausedReply() runlettest.Reply {
	return runlettest.Reply{Response: &runlet.ModelResponse{
		Message: runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.HostedToolPart{
			ID: "srvtoolu_1", Kind: runlet.HostedWebSearch, Name: "web_search", Input: json.RawMessage(`{"query":"go"}`),
			Provider: "anthropic", Raw: json.RawMessage(`[{"type":"server_tool_use","id":"srvtoolu_1"}]`)}}},
		FinishReason: runlet.FinishPause,
		Usage:        runlet.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
	}}
}

// TestPausedTurnContinues: the workflow continues a turn the provider
// paused, with a model call of its own whose request ends with the paused
// message, and returns the answer that finishes the turn.
func TestPausedTurnContinues(t *testing.T) {
	paused := pausedReply()
	model := runlettest.NewModel(paused, runlettest.TextReply("done"))
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model}}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "news?"})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != runlet.StateFinished || res.Output != "done" || res.Turns != 2 || res.Usage.Requests != 2 || len(res.Messages) != 3 {
		t.Fatalf("result = %+v", res)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	msgs := reqs[1].Messages
	if got, want := jsonString(msgs[len(msgs)-1]), jsonString(paused.Response.Message); len(msgs) != 2 || got != want {
		t.Fatalf("continuation request ends with %s, want %s", got, want)
	}
}

// TestPausedTurnMaxTurns: each continuation is a turn, so a model that
// pauses for ever stops at the run's max turns.
func TestPausedTurnMaxTurns(t *testing.T) {
	model := &runlettest.Model{Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply { return pausedReply() }}
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model}}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "news?", MaxTurns: 3})
	app, fd := failure(t, e.GetWorkflowError())
	if app.Type() != ErrTypePolicy || fd.Policy != "max_turns" || fd.Result == nil || fd.Result.Turns != 3 || len(model.Requests()) != 3 {
		t.Fatalf("error %v policy %q result %+v, %d model calls", app, fd.Policy, fd.Result, len(model.Requests()))
	}
}
