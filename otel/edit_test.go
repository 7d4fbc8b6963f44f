package otel

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// The span of a tool call a person edited on approval says so, and with
// content on shows the arguments that ran and the model's.
func TestEditedToolCallSpan(t *testing.T) {
	for _, content := range []bool{false, true} {
		h := newHarness(t, WithContent(content))
		type in struct {
			City string `json:"city"`
		}
		weather := runlet.NewTool("get_weather", "Weather.", func(_ context.Context, a in) (string, error) {
			return "sunny in " + a.City, nil
		}, runlet.WithApproval())
		agent := &runlet.Agent{Name: "assistant", Tools: []runlet.Tool{weather}, Model: runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`)),
			runlettest.TextReply("Sunny."),
		)}
		rt := h.runtime()
		res, err := rt.Run(context.Background(), agent, "weather?")
		if err != nil || res.Status != runlet.StateInterrupted {
			t.Fatalf("res %+v err %v", res, err)
		}
		if _, err := rt.Resume(context.Background(), agent, res.RunID, runlet.ApproveWithArguments("c1", json.RawMessage(`{"city":"Rome"}`))); err != nil {
			t.Fatal(err)
		}
		got := attrs(h.span(t, "execute_tool get_weather").Attributes)
		want := map[string]string{"runlet.tool.call.edited": "true"}
		if content {
			want["gen_ai.tool.call.arguments"] = `{"city":"Rome"}`
			want["runlet.tool.call.original_arguments"] = `{"city":"Paris"}`
		} else if _, ok := got["runlet.tool.call.original_arguments"]; ok {
			t.Errorf("content off, original arguments recorded: %v", got)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("content %v: %s = %q, want %q (all: %v)", content, k, got[k], v, got)
			}
		}
	}
}
