package runlettest

import "github.com/runlet/runlet"

// anthropicFromReply is a provider-neutral WireReply as a scripted
// Messages API response.
func anthropicFromReply(w WireReply) AnthropicResponse {
	r := AnthropicResponse{ID: w.ID, Model: w.Model, Error: w.Error, ErrorAfter: w.ErrorAfter, Body: w.Body}
	if w.Reasoning != "" || w.ReasoningSignature != "" {
		r.Content = append(r.Content, AnthropicThinking(w.Reasoning, w.ReasoningSignature))
	}
	if w.Text != "" || (len(w.ToolCalls) == 0 && w.Refusal == "") {
		r.Content = append(r.Content, AnthropicText(w.Text))
	}
	for _, c := range w.ToolCalls {
		r.Content = append(r.Content, AnthropicToolUse(c.ID, c.Name, c.Arguments))
	}
	switch w.Finish {
	case "":
	case runlet.FinishStop:
		r.StopReason = "end_turn"
	case runlet.FinishToolCalls:
		r.StopReason = "tool_use"
	case runlet.FinishLength:
		r.StopReason = "max_tokens"
	case runlet.FinishContentFilter, runlet.FinishRefusal:
		r.StopReason = "refusal"
	case runlet.FinishPause:
		r.StopReason = "pause_turn"
	default:
		r.StopReason = string(w.Finish)
	}
	if w.Refusal != "" {
		r.StopReason, r.StopDetails = "refusal", &AnthropicStopDetails{Explanation: w.Refusal}
	}
	if u := w.Usage; u != nil {
		r.Usage = AnthropicUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadInputTokens: u.CachedTokens}
	}
	return r
}
