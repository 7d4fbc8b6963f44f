package runlettest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// toolChoiceJSON is what an adapter sent for the tool choice: the
// tool_choice field (Chat Completions, Responses, Anthropic) or Gemini's
// toolConfig, as JSON.
func toolChoiceJSON(r runlettest.WireRequest) string {
	m := r.JSON()
	v, ok := m["tool_choice"]
	if !ok {
		v = m["toolConfig"]
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// A forced tool choice holds for the first request only: once the agent
// has called a tool, the next request says auto in every adapter's own
// terms, and the run ends with the answer instead of calling tools until
// max turns. KeepToolChoice sends the forced choice again.
func TestForcedToolChoiceEndsOnTheWire(t *testing.T) {
	weather := runlet.NewTool("get_weather", "Weather.", func(context.Context, struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny", nil
	})
	required := runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}
	named := runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "get_weather"}
	want := map[string]map[runlet.ToolChoiceMode]string{
		"chat": {runlet.ToolChoiceRequired: `"required"`, runlet.ToolChoiceTool: `{"function":{"name":"get_weather"},"type":"function"}`,
			runlet.ToolChoiceAuto: `"auto"`},
		"responses": {runlet.ToolChoiceRequired: `"required"`, runlet.ToolChoiceTool: `{"name":"get_weather","type":"function"}`,
			runlet.ToolChoiceAuto: `"auto"`},
		"anthropic": {runlet.ToolChoiceRequired: `{"type":"any"}`, runlet.ToolChoiceTool: `{"name":"get_weather","type":"tool"}`,
			runlet.ToolChoiceAuto: `{"type":"auto"}`},
		"gemini": {runlet.ToolChoiceRequired: `{"functionCallingConfig":{"mode":"ANY"}}`,
			runlet.ToolChoiceTool: `{"functionCallingConfig":{"allowedFunctionNames":["get_weather"],"mode":"ANY"}}`,
			runlet.ToolChoiceAuto: `{"functionCallingConfig":{"mode":"AUTO"}}`},
	}
	for _, c := range wireCases(t) {
		for _, choice := range []runlet.ToolChoice{required, named} {
			for _, keep := range []bool{false, true} {
				t.Run(fmt.Sprint(c.name, "/", choice.Mode, "/keep=", keep), func(t *testing.T) {
					call := runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{Name: "get_weather", Arguments: `{"city":"Rome"}`}}}
					answer := runlettest.WireReply{Text: "Sunny in Rome."}
					c.srv.SetReplyResponder(func(r runlettest.WireRequest) runlettest.WireReply {
						if toolChoiceJSON(r) == want[c.name][runlet.ToolChoiceAuto] {
							return answer
						}
						return call // a model obeys a forced choice
					})
					before := len(c.srv.Requests())
					agent := &runlet.Agent{Model: c.model, Tools: []runlet.Tool{weather}, ToolChoice: choice, KeepToolChoice: keep, MaxTurns: 3}
					res, err := runlet.NewRuntime().Run(context.Background(), agent, "weather?")
					reqs := c.srv.Requests()[before:]
					wantChoices := []string{want[c.name][choice.Mode], want[c.name][runlet.ToolChoiceAuto]}
					if keep {
						wantChoices = []string{want[c.name][choice.Mode], want[c.name][choice.Mode], want[c.name][choice.Mode]}
						if err == nil {
							t.Fatalf("a kept forced choice ended: %q", res.Output)
						}
					} else if err != nil || res.Output != "Sunny in Rome." {
						t.Fatalf("output %q, err %v", res.Output, err)
					}
					if len(reqs) != len(wantChoices) {
						t.Fatalf("%d requests, want %d", len(reqs), len(wantChoices))
					}
					for i, r := range reqs {
						if got := toolChoiceJSON(r); got != wantChoices[i] {
							t.Errorf("request %d: tool choice %s, want %s", i, got, wantChoices[i])
						}
					}
				})
			}
		}
	}
}
