package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/wirejson"
)

// wireResponse is a non-streaming Messages API response (and the "message"
// of a message_start event).
type wireResponse struct {
	Type       string      `json:"type"`
	ID         string      `json:"id"`
	Model      string      `json:"model"`
	Content    []wireBlock `json:"content"`
	StopReason string      `json:"stop_reason"`
	Usage      wireUsage   `json:"usage"`
}

// wireBlock is one response content block. Server tool blocks
// (server_tool_use and the *_tool_result blocks) are also kept whole, in
// Raw, to go back unchanged (see hosted.go); the response fast path leaves
// them, and text blocks with citations, to encoding/json.
type wireBlock struct {
	Type      string            `json:"type"`
	Text      string            `json:"text"`
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Input     json.RawMessage   `json:"input"`
	Thinking  string            `json:"thinking"`
	Signature string            `json:"signature"`
	Data      string            `json:"data"`
	Citations []json.RawMessage `json:"citations"`
	ToolUseID string            `json:"tool_use_id"`
	Content   json.RawMessage   `json:"content"`
	Raw       json.RawMessage   `json:"-"`
}

// UnmarshalJSON decodes the block and keeps a server tool block's bytes.
func (b *wireBlock) UnmarshalJSON(data []byte) error {
	type plain wireBlock
	b.Raw = nil
	if err := json.Unmarshal(data, (*plain)(b)); err != nil {
		return err
	}
	if hostedCall(b.Type) || hostedResult(b.Type) {
		b.Raw = bytes.Clone(bytes.TrimSpace(data))
	}
	return nil
}

// wireUsage is the usage object. In message_delta events a field is present
// only when it changed, so decoding starts from unset (-1) values.
type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	// ServerToolUse counts the server tools' billed requests (nil when
	// absent).
	ServerToolUse *struct {
		WebSearchRequests int `json:"web_search_requests"`
	} `json:"server_tool_use"`
	// OutputTokensDetails.ThinkingTokens is the part of output_tokens
	// spent thinking (sent by newer models; nil when absent).
	OutputTokensDetails *struct {
		ThinkingTokens int `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

var unsetUsage = wireUsage{InputTokens: -1, OutputTokens: -1, CacheCreationInputTokens: -1, CacheReadInputTokens: -1}

// merge overlays the fields of o that are set (non-negative).
func (u *wireUsage) merge(o wireUsage) {
	if o.InputTokens >= 0 {
		u.InputTokens = o.InputTokens
	}
	if o.OutputTokens >= 0 {
		u.OutputTokens = o.OutputTokens
	}
	if o.CacheCreationInputTokens >= 0 {
		u.CacheCreationInputTokens = o.CacheCreationInputTokens
	}
	if o.CacheReadInputTokens >= 0 {
		u.CacheReadInputTokens = o.CacheReadInputTokens
	}
	if o.OutputTokensDetails != nil {
		u.OutputTokensDetails = o.OutputTokensDetails
	}
	if o.ServerToolUse != nil {
		u.ServerToolUse = o.ServerToolUse
	}
}

// usage converts to runlet.Usage. Anthropic's input_tokens counts only the
// tokens after the last cache breakpoint; runlet's InputTokens is the whole
// prompt, so it is input_tokens + cache_read_input_tokens +
// cache_creation_input_tokens, with the cached and cache-write parts also
// reported in CachedInputTokens and CacheWriteTokens.
func (u wireUsage) usage() runlet.Usage {
	in := max(u.InputTokens, 0) + max(u.CacheReadInputTokens, 0) + max(u.CacheCreationInputTokens, 0)
	out := max(u.OutputTokens, 0)
	return runlet.Usage{
		InputTokens:       in,
		OutputTokens:      out,
		TotalTokens:       in + out,
		CachedInputTokens: max(u.CacheReadInputTokens, 0),
		CacheWriteTokens:  max(u.CacheCreationInputTokens, 0),
		ReasoningTokens:   u.thinking(),
		Requests:          1,
		WebSearchRequests: u.webSearches(),
	}
}

func (u wireUsage) webSearches() int {
	if u.ServerToolUse == nil {
		return 0
	}
	return max(u.ServerToolUse.WebSearchRequests, 0)
}

func (u wireUsage) thinking() int {
	if u.OutputTokensDetails == nil {
		return 0
	}
	return max(u.OutputTokensDetails.ThinkingTokens, 0)
}

// finishReason maps a stop_reason. An empty one (a proxy may drop it) is
// derived from the content.
func finishReason(stop string, hasToolCalls bool) runlet.FinishReason {
	switch stop {
	case "end_turn", "stop_sequence":
		return runlet.FinishStop
	case "tool_use":
		return runlet.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return runlet.FinishLength
	case "pause_turn":
		return runlet.FinishPause
	case "refusal":
		return runlet.FinishRefusal
	case "":
		if hasToolCalls {
			return runlet.FinishToolCalls
		}
		return runlet.FinishStop
	}
	return runlet.FinishOther
}

// toResponse translates a decoded non-streaming response. Text, tool_use,
// thinking and redacted_thinking blocks become parts in order, a server
// tool's call and result block one HostedToolPart; unknown future block
// types are skipped.
func (m *Messages) toResponse(w *wireResponse) *runlet.ModelResponse {
	msg := runlet.Message{Role: runlet.RoleAssistant, Parts: make([]runlet.Part, 0, len(w.Content))}
	hasCalls := false
	for i := range w.Content {
		b := &w.Content[i]
		switch b.Type {
		case "text":
			if b.Text != "" {
				msg.Parts = append(msg.Parts, runlet.TextPart{Text: b.Text, Citations: citations(m.cfg.name, b.Citations)})
			}
		case "tool_use":
			// The input slices the body read for this call, or is
			// encoding/json's copy: not copied again when compact.
			msg.Parts = append(msg.Parts, runlet.ToolCallPart{ID: b.ID, Name: b.Name, Arguments: wirejson.CompactOwned(b.Input)})
			hasCalls = true
		case "thinking":
			msg.Parts = append(msg.Parts, runlet.ReasoningPart{Text: b.Thinking, Signature: b.Signature, Provider: m.cfg.name})
		case "redacted_thinking":
			msg.Parts = append(msg.Parts, runlet.ReasoningPart{Encrypted: b.Data, Provider: m.cfg.name})
		default:
			switch {
			case hostedCall(b.Type) && len(b.Raw) > 0:
				msg.Parts = append(msg.Parts, callPart(m.cfg.name, b, b.Raw, wirejson.CompactOwned(b.Input)))
			case hostedResult(b.Type) && len(b.Raw) > 0:
				msg.Parts = addResult(m.cfg.name, msg.Parts, b, b.Raw)
			}
		}
	}
	return &runlet.ModelResponse{
		Message:      msg,
		Usage:        w.Usage.usage(),
		FinishReason: finishReason(w.StopReason, hasCalls),
		ID:           w.ID,
		Model:        w.Model,
	}
}
