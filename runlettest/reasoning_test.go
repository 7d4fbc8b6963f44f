package runlettest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// The neutral reasoning setting reaches every adapter's API in its own
// terms (the table in the README); a provider option for the same field
// wins; an effort that is not a level fails before anything is sent.
func TestReasoningSettingOnTheWire(t *testing.T) {
	effort := runlet.Reasoning{Effort: runlet.ReasoningHigh, Summary: true}
	budget := runlet.Reasoning{Effort: runlet.ReasoningLow, BudgetTokens: 2048, Summary: true}
	// The JSON of the request fields each case should produce, by the path
	// of the field.
	type fields map[string]string
	want := map[string]struct {
		effort, budget, option fields
		options                map[string]any
	}{
		"chat": {
			effort:  fields{"reasoning_effort": `"high"`},
			budget:  fields{"reasoning_effort": `"low"`},
			options: map[string]any{"reasoning_effort": "minimal"},
			option:  fields{"reasoning_effort": `"minimal"`},
		},
		"responses": {
			effort:  fields{"reasoning": `{"effort":"high","summary":"auto"}`},
			budget:  fields{"reasoning": `{"effort":"low","summary":"auto"}`},
			options: map[string]any{"reasoning": map[string]any{"effort": "minimal"}},
			option:  fields{"reasoning": `{"effort":"minimal"}`},
		},
		"anthropic": {
			effort:  fields{"thinking": `{"display":"summarized","type":"adaptive"}`, "output_config": `{"effort":"high"}`},
			budget:  fields{"thinking": `{"budget_tokens":2048,"display":"summarized","type":"enabled"}`, "output_config": `{"effort":"low"}`},
			options: map[string]any{"thinking": 4096, "output_config": map[string]any{"effort": "max"}},
			option:  fields{"thinking": `{"budget_tokens":4096,"type":"enabled"}`, "output_config": `{"effort":"max"}`},
		},
		"gemini": {
			effort:  fields{"generationConfig": `{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"high"}}`},
			budget:  fields{"generationConfig": `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}}`},
			options: map[string]any{"thinking_level": "minimal", "include_thoughts": false},
			option:  fields{"generationConfig": `{"thinkingConfig":{"includeThoughts":false,"thinkingLevel":"minimal"}}`},
		},
	}
	for _, c := range wireCases(t) {
		w := want[c.name]
		for _, tc := range []struct {
			name      string
			reasoning runlet.Reasoning
			options   map[string]any
			want      fields
		}{
			{"effort", effort, nil, w.effort},
			{"budget", budget, nil, w.budget},
			{"option wins", effort, w.options, w.option},
		} {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				c.srv.EnqueueReplies(runlettest.WireReply{Text: "ok"})
				before := len(c.srv.Requests())
				agent := &runlet.Agent{Model: c.model, Settings: runlet.Settings{Reasoning: tc.reasoning}, Options: tc.options}
				if _, err := runlet.NewRuntime().Run(context.Background(), agent, "think"); err != nil {
					t.Fatal(err)
				}
				reqs := c.srv.Requests()[before:]
				if len(reqs) != 1 {
					t.Fatalf("%d requests", len(reqs))
				}
				body := reqs[0].JSON()
				for key, wantJSON := range tc.want {
					got, _ := json.Marshal(body[key])
					if string(got) != wantJSON {
						t.Errorf("%s = %s, want %s", key, got, wantJSON)
					}
				}
			})
		}
		t.Run(c.name+"/typo", func(t *testing.T) {
			before := len(c.srv.Requests())
			bad := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("think")},
				Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: "hihg"}}}
			_, err := c.model.Generate(context.Background(), bad)
			var pe *runlet.ProviderError
			if !errors.Is(err, runlet.ErrInvalidRequest) || !errors.As(err, &pe) {
				t.Fatalf("adapter: err = %v", err)
			}
			agent := &runlet.Agent{Model: c.model, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: "hihg"}}}
			if _, err := runlet.NewRuntime().Run(context.Background(), agent, "think"); !errors.Is(err, runlet.ErrInvalidRequest) {
				t.Fatalf("run: err = %v", err)
			}
			if n := len(c.srv.Requests()) - before; n != 0 {
				t.Fatalf("%d requests sent", n)
			}
		})
	}
}
