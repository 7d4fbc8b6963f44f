package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/wirejson"
)

// thinkingOption normalises the "thinking" option: an integer budget means
// {"type":"enabled","budget_tokens":N} (0 leaves thinking off), a string is
// the type ("adaptive", "disabled"), and an object is sent as given.
func thinkingOption(v any) (any, error) {
	if n, ok := wirejson.ToInt(v); ok {
		if n < 0 {
			return nil, fmt.Errorf("negative budget %d", n)
		}
		if n == 0 {
			return nil, nil
		}
		return map[string]any{"type": "enabled", "budget_tokens": n}, nil
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if v {
			return nil, fmt.Errorf("true needs a budget: use an integer or an object")
		}
		return nil, nil
	case string:
		if v == "" {
			return nil, nil
		}
		return map[string]any{"type": v}, nil
	case map[string]any, json.RawMessage:
		return v, nil
	}
	return nil, fmt.Errorf("want an integer budget, a type string or an object, got %T", v)
}

// reasoningThinking maps Settings.Reasoning onto the thinking object and
// the output_config effort: a budget is extended thinking
// {"type":"enabled","budget_tokens":N}; an effort alone is adaptive
// thinking {"type":"adaptive"} (Claude 4.6 and later; see applyReasoning
// for earlier models); Summary asks for summarized thinking ("display":"summarized",
// which newer models omit by default). The effort also goes into
// output_config.effort. thinking is nil when r asks for none.
func reasoningThinking(r runlet.Reasoning) (thinking map[string]any, effort string) {
	switch {
	case r.BudgetTokens > 0:
		thinking = map[string]any{"type": "enabled", "budget_tokens": r.BudgetTokens}
	case r.Effort != "":
		thinking = map[string]any{"type": "adaptive"}
	}
	if thinking != nil && r.Summary {
		thinking["display"] = "summarized"
	}
	return thinking, string(r.Effort)
}

// adaptiveModel reports whether a model takes adaptive thinking and the
// effort parameter: Claude 4.6 and later, and any name that is not a
// Claude name (a proxy's alias).
func adaptiveModel(model string) bool {
	_, major, minor, claude, ok := claudeVersion(model)
	return !claude || ok && (major >= 5 || major == 4 && minor >= 6)
}

// applyReasoning lays the neutral reasoning setting under the options for
// model: the "thinking" option, when given (thinkingSet), and an "effort"
// in the "output_config" option win. A model before Claude 4.6 gets no
// effort, which it does not take, and an effort without a budget is an
// error for it rather than a request it would refuse. It returns the
// thinking and output_config values to send.
func applyReasoning(r runlet.Reasoning, model string, thinking any, thinkingSet bool, outputConfig map[string]any) (any, map[string]any, error) {
	if r == (runlet.Reasoning{}) { // the usual request: nothing to parse
		return thinking, outputConfig, nil
	}
	t, effort := reasoningThinking(r)
	if effort != "" && !adaptiveModel(model) {
		if r.BudgetTokens == 0 && effort != "" && !thinkingSet {
			return nil, nil, fmt.Errorf("reasoning effort %q needs adaptive thinking, which %s does not take (Claude 4.6 and later do): give it a thinking budget (Reasoning.BudgetTokens; runlet --reasoning-budget)", effort, model)
		}
		effort = ""
	}
	if !thinkingSet && t != nil {
		thinking = t
	}
	if effort != "" {
		if _, set := outputConfig["effort"]; !set {
			if outputConfig == nil {
				outputConfig = make(map[string]any, 1)
			}
			outputConfig["effort"] = effort
		}
	}
	return thinking, outputConfig, nil
}

// thinkingBudget returns the budget_tokens of a thinking value, or 0.
func thinkingBudget(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n, _ := wirejson.ToInt(v["budget_tokens"])
		return n
	case json.RawMessage:
		var t struct {
			BudgetTokens int `json:"budget_tokens"`
		}
		_ = json.Unmarshal(v, &t)
		return t.BudgetTokens
	}
	return 0
}

// cacheControlOption normalises the "cache_control" option: true means
// {"type":"ephemeral"}, a string is a TTL ("5m", "1h"), an object is used
// as given, and false or nil means no caching.
func cacheControlOption(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if !v {
			return nil, nil
		}
		return json.RawMessage(`{"type":"ephemeral"}`), nil
	case string:
		if v == "" {
			return json.RawMessage(`{"type":"ephemeral"}`), nil
		}
		return json.Marshal(map[string]string{"type": "ephemeral", "ttl": v})
	case map[string]any, map[string]string, json.RawMessage:
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("want true, a TTL string or an object, got %T", v)
}

// betasOption reads the "betas" option: a list of strings or one
// comma-separated string.
func betasOption(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return joinBetas([]string{v}), nil
	case []string:
		return joinBetas(v), nil
	case []any:
		list := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return "", fmt.Errorf("want strings, got %T", e)
			}
			list = append(list, s)
		}
		return joinBetas(list), nil
	}
	return "", fmt.Errorf("want a list of strings, got %T", v)
}
