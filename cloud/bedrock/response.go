package bedrock

import (
	"encoding/json"

	"github.com/runlet/runlet"
)

// ResponseInfo is what a Converse response carries beside the message,
// usage and stop reason, passed through unchanged (see Config.OnResponse).
// Each field is the response's JSON, or nil when it had none.
type ResponseInfo struct {
	// Model is the model ID the request named.
	Model string
	// StopReason is Bedrock's own stop reason ("end_turn",
	// "guardrail_intervened", ...), before it was mapped to a
	// runlet.FinishReason.
	StopReason string
	// Trace is the guardrail and prompt router trace
	// ({"guardrail": {...}, "promptRouter": {...}}) of a request with
	// guardrailConfig.trace enabled.
	Trace json.RawMessage
	// AdditionalModelResponseFields are the fields asked for with the
	// additionalModelResponseFieldPaths option.
	AdditionalModelResponseFields json.RawMessage
	// Metrics ({"latencyMs": N}), PerformanceConfig and ServiceTier as
	// Bedrock reported them.
	Metrics, PerformanceConfig, ServiceTier json.RawMessage
	// RequestID is the x-amzn-RequestId header.
	RequestID string
}

// finishReason maps a Bedrock stop reason.
func finishReason(s string, toolCalls bool) runlet.FinishReason {
	switch s {
	case "end_turn", "stop_sequence":
		if toolCalls {
			return runlet.FinishToolCalls
		}
		return runlet.FinishStop
	case "tool_use":
		return runlet.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return runlet.FinishLength
	case "guardrail_intervened", "content_filtered":
		return runlet.FinishContentFilter
	case "":
		return ""
	}
	return runlet.FinishOther
}

// usage maps Bedrock's token usage. Bedrock's inputTokens excludes the
// prompt-cache reads and writes (totalTokens = inputTokens + outputTokens
// + cacheReadInputTokens + cacheWriteInputTokens in recorded traffic);
// runlet.Usage.InputTokens counts the whole prompt, so they are added.
func usage(u *wireUsage) runlet.Usage {
	if u == nil {
		return runlet.Usage{}
	}
	in := u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens
	return runlet.Usage{
		InputTokens:       in,
		OutputTokens:      u.OutputTokens,
		TotalTokens:       in + u.OutputTokens,
		CachedInputTokens: u.CacheReadInputTokens,
		CacheWriteTokens:  u.CacheWriteInputTokens,
	}
}

// toResponse maps a Converse response. Blocks the adapter does not read
// (citations, guard content, images, server tool results) are skipped.
func (m *Model) toResponse(w *wireResponse) *runlet.ModelResponse {
	msg := runlet.Message{Role: runlet.RoleAssistant}
	calls := false
	if w.Output.Message != nil {
		msg.Parts = make([]runlet.Part, 0, len(w.Output.Message.Content))
		for _, b := range w.Output.Message.Content {
			switch {
			case b.Text != nil:
				msg.Parts = append(msg.Parts, runlet.TextPart{Text: *b.Text})
			case b.ToolUse != nil:
				if b.ToolUse.Type == "server_tool_use" {
					continue // run by Bedrock, answered in the same message
				}
				args := b.ToolUse.Input
				if len(args) == 0 || string(args) == "null" {
					args = json.RawMessage("{}")
				}
				msg.Parts = append(msg.Parts, runlet.ToolCallPart{ID: b.ToolUse.ToolUseID, Name: b.ToolUse.Name, Arguments: args})
				calls = true
			case b.ReasoningContent != nil:
				r := runlet.ReasoningPart{Provider: m.cfg.name, Encrypted: b.ReasoningContent.RedactedContent}
				if t := b.ReasoningContent.ReasoningText; t != nil {
					r.Text, r.Signature = t.Text, t.Signature
				}
				msg.Parts = append(msg.Parts, r)
			}
		}
	}
	finish := finishReason(w.StopReason, calls)
	if finish == "" {
		finish = runlet.FinishStop
		if calls {
			finish = runlet.FinishToolCalls
		}
	}
	return &runlet.ModelResponse{Message: msg, Usage: usage(w.Usage), FinishReason: finish}
}

// partsSize is what a response's parts count against MaxResponseBytes.
func partsSize(msg runlet.Message) int {
	n := 0
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case runlet.TextPart:
			n += len(p.Text)
		case runlet.ReasoningPart:
			n += len(p.Text) + len(p.Signature) + len(p.Encrypted)
		case runlet.ToolCallPart:
			n += len(p.ID) + len(p.Name) + len(p.Arguments)
		}
	}
	return n
}
