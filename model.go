package runlet

import (
	"context"
	"iter"

	"github.com/google/jsonschema-go/jsonschema"
)

// Model is the provider contract: one wire API behind two methods. Adapters
// live in sub-packages (providers/openai, providers/anthropic); a third-party
// provider implements these two methods and nothing else.
//
// Generate returns the whole response. Stream yields deltas as they arrive
// and ends with exactly one StreamDone event carrying the assembled response,
// or with a non-nil error. A Stream must stop promptly, releasing its
// connection, when the consumer stops ranging or ctx is cancelled.
// Package modelkit holds the provider author's toolkit: an Accumulator for
// the final response, and helpers deriving either method from the other;
// modelkit/modeltest is the conformance suite that checks all of this.
type Model interface {
	Generate(ctx context.Context, req *ModelRequest) (*ModelResponse, error)
	Stream(ctx context.Context, req *ModelRequest) iter.Seq2[StreamEvent, error]
}

// ModelRequest is everything sent to a model for one call.
type ModelRequest struct {
	Instructions string     `json:"instructions,omitempty"`
	Messages     []Message  `json:"messages"`
	Tools        []ToolSpec `json:"tools,omitempty"`
	// HostedTools are the tools the provider runs itself (see HostedTool).
	HostedTools  []HostedTool   `json:"hosted_tools,omitempty"`
	ToolChoice   ToolChoice     `json:"tool_choice,omitzero"`
	OutputSchema *OutputSchema  `json:"output_schema,omitempty"`
	Settings                    // common settings, promoted: req.Temperature, ...
	Options      map[string]any `json:"options,omitempty"`
}

// Settings are the request settings most providers share. Zero values mean
// "provider default".
type Settings struct {
	Temperature     *float64 `json:"temperature,omitempty"`
	TopP            *float64 `json:"top_p,omitempty"`
	MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
	StopSequences   []string `json:"stop_sequences,omitempty"`
	// Reasoning asks a reasoning model how much to think and whether to
	// return its reasoning, in the same terms for every adapter (see
	// Reasoning for how each maps it). A run fails before any model call
	// when it is not valid (see Reasoning.Validate).
	Reasoning Reasoning `json:"reasoning,omitzero"`
}

// merge overlays the non-zero fields of o on s.
func (s Settings) merge(o Settings) Settings {
	if o.Temperature != nil {
		s.Temperature = o.Temperature
	}
	if o.TopP != nil {
		s.TopP = o.TopP
	}
	if o.MaxOutputTokens != 0 {
		s.MaxOutputTokens = o.MaxOutputTokens
	}
	if o.StopSequences != nil {
		s.StopSequences = o.StopSequences
	}
	if o.Reasoning.Effort != "" {
		s.Reasoning.Effort = o.Reasoning.Effort
	}
	if o.Reasoning.BudgetTokens != 0 {
		s.Reasoning.BudgetTokens = o.Reasoning.BudgetTokens
	}
	if o.Reasoning.Summary {
		s.Reasoning.Summary = true
	}
	return s
}

// ToolSpec describes a tool to the model. InputSchema is a JSON Schema as
// a *jsonschema.Schema from github.com/google/jsonschema-go/jsonschema
// (SchemaFor infers one from a Go type, so you rarely need that import).
// Adapters cache the JSON of InputSchema by its address, so treat a schema
// as immutable once a tool using it has run: build a new schema rather than
// modifying one.
type ToolSpec struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	InputSchema *jsonschema.Schema `json:"input_schema,omitempty"`
}

// ToolChoice says whether and which tool the model must call. The zero value
// leaves the choice to the provider's default (normally auto).
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode,omitempty"`
	Name string         `json:"name,omitempty"` // with ToolChoiceTool
}

// ToolChoiceMode is the kind of ToolChoice.
type ToolChoiceMode string

// Tool choice modes.
const (
	ToolChoiceAuto     ToolChoiceMode = "auto"
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceRequired ToolChoiceMode = "required" // any tool
	ToolChoiceTool     ToolChoiceMode = "tool"     // the tool named in Name
)

// OutputSchema asks for a final answer that is JSON matching Schema, a
// *jsonschema.Schema from github.com/google/jsonschema-go/jsonschema (see
// OutputFor and SchemaFor). The
// run validates the answer and asks again when it does not match (see
// RunAs). OutputFor infers one from a Go type.
type OutputSchema struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	Schema      *jsonschema.Schema `json:"schema"`
	// Strict asks a provider for strict schema enforcement. The OpenAI
	// adapters enforce strictly whenever the schema can be made strict,
	// whatever Strict says (see providers/openai).
	Strict bool `json:"strict,omitempty"`
	// Mode forces an output mode; empty lets the run choose (see OutputMode).
	Mode OutputMode `json:"mode,omitempty"`
}

// ModelResponse is one complete answer from a model.
type ModelResponse struct {
	Message      Message      `json:"message"`
	Usage        Usage        `json:"usage"`
	FinishReason FinishReason `json:"finish_reason"`
	ID           string       `json:"id,omitempty"`    // provider response ID
	Model        string       `json:"model,omitempty"` // model name the provider reported; the built-in adapters put the requested model when it reports none
}

// FinishReason is why the model stopped, normalised across providers.
type FinishReason string

// Finish reasons. Adapters map their provider's values onto this set and
// use FinishOther for anything else.
const (
	FinishStop          FinishReason = "stop"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content_filter"
	FinishRefusal       FinishReason = "refusal"
	FinishPause         FinishReason = "pause" // provider paused a long turn (Anthropic pause_turn); the run calls the model again to continue it
	FinishOther         FinishReason = "other"
)

// Usage counts tokens, the same way for every adapter: InputTokens is the
// whole prompt, with the tokens read from the provider's prompt cache
// (CachedInputTokens) and written to it (CacheWriteTokens) among them, and
// OutputTokens includes ReasoningTokens. (OpenAI and Gemini count cached
// tokens inside the prompt; the Anthropic adapter adds Anthropic's
// separate cache counts to input_tokens.) Price.Cost relies on this.
type Usage struct {
	InputTokens       int `json:"input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	TotalTokens       int `json:"total_tokens"`
	ReasoningTokens   int `json:"reasoning_tokens,omitempty"`
	CachedInputTokens int `json:"cached_input_tokens,omitempty"`
	CacheWriteTokens  int `json:"cache_write_tokens,omitempty"`
	Requests          int `json:"requests,omitempty"` // model calls counted in this Usage
	// WebSearchRequests counts the searches a hosted web search made (see
	// HostedTool), which providers bill per search: Anthropic's
	// usage.server_tool_use.web_search_requests, or the number of
	// web_search_call items an OpenAI Responses answer holds. Zero when
	// the provider reports no count (Gemini, Chat Completions).
	WebSearchRequests int `json:"web_search_requests,omitempty"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + o.InputTokens,
		OutputTokens:      u.OutputTokens + o.OutputTokens,
		TotalTokens:       u.TotalTokens + o.TotalTokens,
		ReasoningTokens:   u.ReasoningTokens + o.ReasoningTokens,
		CachedInputTokens: u.CachedInputTokens + o.CachedInputTokens,
		CacheWriteTokens:  u.CacheWriteTokens + o.CacheWriteTokens,
		Requests:          u.Requests + o.Requests,
		WebSearchRequests: u.WebSearchRequests + o.WebSearchRequests,
	}
}

// StreamEventKind tells which fields of a StreamEvent are set.
type StreamEventKind uint8

// Stream event kinds.
const (
	StreamTextDelta      StreamEventKind = iota + 1 // Delta is text
	StreamReasoningDelta                            // Delta is reasoning text
	StreamToolCallDelta                             // Index, and ID/Name when first seen; Delta is an arguments fragment
	StreamDone                                      // Response is the assembled response
)

// StreamEvent is one event of a model stream. It is a small value, not an
// interface, so forwarding deltas does not allocate.
type StreamEvent struct {
	Kind  StreamEventKind
	Delta string
	// Tool-call deltas: Index identifies the call within the response; ID and
	// Name are set on (at least) the first delta of a call.
	Index    int
	ID, Name string
	// Response is set on StreamDone.
	Response *ModelResponse
}
