package anthropic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

// Settings.Reasoning by model: adaptive thinking and the effort for Claude
// 4.6 and later (and a proxy's alias); a budget alone for earlier models,
// which take no effort, and an effort without a budget is refused before
// anything is sent, naming the fix, rather than sent for a 400.
func TestReasoningByModel(t *testing.T) {
	high := runlet.Reasoning{Effort: runlet.ReasoningHigh, Summary: true}
	budget := runlet.Reasoning{Effort: runlet.ReasoningHigh, BudgetTokens: 8000}
	for _, tc := range []struct {
		model            string
		r                runlet.Reasoning
		thinking, config string // JSON; "" for absent
		maxTokens        float64
		err              string
	}{
		{"claude-opus-4-6", high, `{"display":"summarized","type":"adaptive"}`, `{"effort":"high"}`, DefaultMaxTokens, ""},
		{"claude-sonnet-5", high, `{"display":"summarized","type":"adaptive"}`, `{"effort":"high"}`, DefaultMaxTokens, ""},
		{"my-proxy-alias", high, `{"display":"summarized","type":"adaptive"}`, `{"effort":"high"}`, DefaultMaxTokens, ""},
		{"claude-opus-4-6", budget, `{"budget_tokens":8000,"type":"enabled"}`, `{"effort":"high"}`, 8000 + DefaultMaxTokens, ""},
		{"claude-sonnet-4-5", budget, `{"budget_tokens":8000,"type":"enabled"}`, "", 8000 + DefaultMaxTokens, ""},
		{"claude-3-7-sonnet-latest", budget, `{"budget_tokens":8000,"type":"enabled"}`, "", 8000 + DefaultMaxTokens, ""},
		{"claude-sonnet-4-5", high, "", "", 0, "Reasoning.BudgetTokens"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			m := newTestModel("https://example.test", Config{Model: tc.model})
			b, err := m.buildRequest(&runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}, Settings: runlet.Settings{Reasoning: tc.r}}, false)
			if tc.err != "" {
				if !errors.Is(err, runlet.ErrInvalidRequest) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(b.body, &body); err != nil {
				t.Fatal(err)
			}
			if got := string(body["thinking"]); got != tc.thinking {
				t.Errorf("thinking %s, want %s", got, tc.thinking)
			}
			if got := string(body["output_config"]); got != tc.config {
				t.Errorf("output_config %s, want %s", got, tc.config)
			}
			var max float64
			_ = json.Unmarshal(body["max_tokens"], &max)
			if max != tc.maxTokens {
				t.Errorf("max_tokens %v, want %v", max, tc.maxTokens)
			}
		})
	}
}
