package runlet

import "fmt"

// Reasoning is the provider-neutral reasoning setting (Settings.Reasoning):
// how much a reasoning model thinks before it answers, and whether its
// reasoning comes back as ReasoningParts. The zero value leaves every
// provider's default. The built-in adapters map it so (the README's
// Providers section has the same table, with the OpenAI-compatible
// presets):
//
//	adapter           Effort                        BudgetTokens                     Summary
//	Chat Completions  reasoning_effort              (not sent: no budget)            (not sent: no summaries)
//	Responses         reasoning.effort              (not sent: no budget)            reasoning.summary "auto"
//	Anthropic         thinking {"type":"adaptive"}  thinking {"type":"enabled",      thinking.display "summarized"
//	                  and output_config.effort      "budget_tokens":N} instead
//	                  (Claude 4.6 and later)
//	Gemini            thinkingConfig.thinkingLevel  thinkingConfig.thinkingBudget    thinkingConfig.includeThoughts
//	                                                instead (not both)
//
// A provider option for the same field, given in ModelRequest.Options
// (reasoning_effort, reasoning, thinking, output_config's effort,
// thinking_budget, thinking_level, include_thoughts), wins over it. A
// model that cannot reason rejects the fields or ignores them, as its
// provider does.
type Reasoning struct {
	// Effort is how hard the model thinks: ReasoningLow, ReasoningMedium
	// or ReasoningHigh. Empty leaves the provider's default.
	Effort ReasoningEffort `json:"effort,omitempty"`
	// BudgetTokens caps the tokens spent thinking, for the APIs that take
	// a budget (Anthropic's extended thinking, which needs at least 1024,
	// and Gemini's thinkingBudget); the OpenAI APIs take none. Zero
	// leaves the provider's default.
	BudgetTokens int `json:"budget_tokens,omitempty"`
	// Summary asks for the model's reasoning in the response: a summary
	// (OpenAI Responses, Anthropic) or thought summaries (Gemini).
	Summary bool `json:"summary,omitempty"`
}

// ReasoningEffort is a level of Reasoning.Effort.
type ReasoningEffort string

// Reasoning effort levels, the ones every reasoning API takes.
const (
	ReasoningLow    ReasoningEffort = "low"
	ReasoningMedium ReasoningEffort = "medium"
	ReasoningHigh   ReasoningEffort = "high"
)

// Validate reports what is wrong with r, or nil: an effort that is not one
// of the levels (a typo is not sent as is), or a negative budget. A run
// fails with it, wrapped in ErrInvalidRequest, before any model call, and
// the adapters return it as their ErrInvalidRequest error.
func (r Reasoning) Validate() error {
	switch r.Effort {
	case "", ReasoningLow, ReasoningMedium, ReasoningHigh:
	default:
		return fmt.Errorf("reasoning effort %q: want %q, %q or %q", string(r.Effort), ReasoningLow, ReasoningMedium, ReasoningHigh)
	}
	if r.BudgetTokens < 0 {
		return fmt.Errorf("reasoning budget %d: want a positive number of tokens, or 0 for the provider's default", r.BudgetTokens)
	}
	return nil
}
