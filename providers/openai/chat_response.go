package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
)

// chatCompletion is a non-streamed response body.
type chatCompletion struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Choices []chatChoice    `json:"choices"`
	Usage   *chatUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type chatChoice struct {
	Index        int         `json:"index"`
	Message      chatRespMsg `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type chatRespMsg struct {
	chatTexts
	// ReasoningDetails is kept as received (OpenRouter and others).
	ReasoningDetails json.RawMessage `json:"reasoning_details"`
	// Annotations are a web search's url_citation annotations.
	Annotations json.RawMessage `json:"annotations"`
	ToolCalls   []chatRespCall  `json:"tool_calls"`
	// ExtraContent on the message is where Gemini's compatible endpoint
	// first put a tool call's thought signature (2025); it now puts it on
	// the call.
	ExtraContent *chatExtraContent `json:"extra_content"`
}

// chatTexts are the text fields of a message and of a stream's delta.
type chatTexts struct {
	Content          chatStr `json:"content"`
	Refusal          chatStr `json:"refusal"`
	ReasoningContent chatStr `json:"reasoning_content"`
	Reasoning        chatStr `json:"reasoning"`
}

// field returns the field of key, one of the four keys of chatTexts.
func (t *chatTexts) field(key []byte) *chatStr {
	switch string(key) {
	case "content":
		return &t.Content
	case "refusal":
		return &t.Refusal
	case "reasoning_content":
		return &t.ReasoningContent
	}
	return &t.Reasoning
}

// chatRespCall is one tool call of a non-streamed response.
type chatRespCall struct {
	ID           string            `json:"id"`
	Function     chatCallFunc      `json:"function"`
	ExtraContent *chatExtraContent `json:"extra_content"`
}

// chatCallFunc is a tool call's function, whole or a stream's delta.
type chatCallFunc struct {
	Name      string  `json:"name"`
	Arguments chatStr `json:"arguments"`
}

// chatExtraContent is the provider state Gemini's OpenAI-compatible
// endpoint attaches to a tool call: its thought signature, which Gemini 3
// needs back on that call in the next request.
type chatExtraContent struct {
	Google struct {
		ThoughtSignature string `json:"thought_signature"`
	} `json:"google"`
}

// signature returns the thought signature, "" when there is none.
func (e *chatExtraContent) signature() string {
	if e == nil {
		return ""
	}
	return e.Google.ThoughtSignature
}

// signedCall returns a tool call carrying a thought signature, tagged with
// the adapter that received it (only that one sends it back).
func signedCall(tc runlet.ToolCallPart, sig, provider string) runlet.ToolCallPart {
	if sig != "" {
		tc.Signature, tc.Provider = sig, provider
	}
	return tc
}

// chatUsage is the usage object, with the fields compatible servers add.
type chatUsage struct {
	PromptTokens            int           `json:"prompt_tokens"`
	CompletionTokens        int           `json:"completion_tokens"`
	TotalTokens             int           `json:"total_tokens"`
	PromptTokensDetails     inputDetails  `json:"prompt_tokens_details"`
	CompletionTokensDetails outputDetails `json:"completion_tokens_details"`
	PromptCacheHitTokens    int           `json:"prompt_cache_hit_tokens"` // DeepSeek
	CachedTokens            int           `json:"cached_tokens"`           // Together, top level
	ReasoningTokens         int           `json:"reasoning_tokens"`        // SGLang-style servers, top level
	// ServerToolUseDetails counts OpenRouter's server tool calls.
	ServerToolUseDetails *struct {
		WebSearchRequests int `json:"web_search_requests"`
	} `json:"server_tool_use_details"`
}

func (u *chatUsage) usage() runlet.Usage {
	out := runlet.Usage{
		InputTokens:       u.PromptTokens,
		OutputTokens:      u.CompletionTokens,
		TotalTokens:       u.TotalTokens,
		ReasoningTokens:   u.CompletionTokensDetails.ReasoningTokens,
		CachedInputTokens: u.PromptTokensDetails.CachedTokens,
		CacheWriteTokens:  u.PromptTokensDetails.CacheWriteTokens,
	}
	if out.ReasoningTokens == 0 {
		out.ReasoningTokens = u.ReasoningTokens
	}
	if out.CachedInputTokens == 0 {
		out.CachedInputTokens = max(u.PromptCacheHitTokens, u.CachedTokens)
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.InputTokens + out.OutputTokens
	}
	if d := u.ServerToolUseDetails; d != nil {
		out.WebSearchRequests = max(d.WebSearchRequests, 0)
	}
	return out
}

// chatFinish maps a finish_reason onto Runlet's set.
func chatFinish(reason string, hasCalls, refusal bool) runlet.FinishReason {
	switch {
	case refusal:
		return runlet.FinishRefusal
	case hasCalls && (reason == "stop" || reason == "" || reason == "tool_calls" || reason == "function_call"):
		return runlet.FinishToolCalls
	}
	switch reason {
	case "stop", "":
		return runlet.FinishStop
	case "length":
		return runlet.FinishLength
	case "tool_calls", "function_call":
		return runlet.FinishToolCalls
	case "content_filter":
		return runlet.FinishContentFilter
	}
	return runlet.FinishOther
}

// chatDecodeCompletion translates a non-streamed response body: read with
// the fast path (see chatScanner), else with encoding/json.
func chatDecodeCompletion(provider string, body []byte, thinkTags bool) (*runlet.ModelResponse, error) {
	var (
		wire    chatCompletion // id and model
		choices [1]chatChoice
		calls   [8]chatRespCall
		usage   chatUsage
	)
	st := chatScanStore{w: &wire, choices: &choices, calls: &calls, usage: &usage}
	c := chatScanner{alias: true}
	if !c.completion(body, &st) {
		return chatDecodeCompletionSlow(provider, body, thinkTags)
	}
	u := &usage
	if !st.hasUsage {
		u = nil
	}
	return chatConvertCompletion(provider, wire.ID, wire.Model, chatChoice0(choices[:st.nChoices]), calls[:st.nCalls], u, thinkTags)
}

// chatDecodeCompletionSlow is chatDecodeCompletion with encoding/json.
func chatDecodeCompletionSlow(provider string, body []byte, thinkTags bool) (*runlet.ModelResponse, error) {
	w, err := chatUnmarshalCompletion(provider, body)
	if err != nil {
		return nil, err
	}
	if chatHasError(w.Error) {
		return nil, chatErrorEvent(provider, body)
	}
	ch := chatChoice0(w.Choices)
	var calls []chatRespCall
	if ch != nil {
		calls = ch.Message.ToolCalls
	}
	return chatConvertCompletion(provider, w.ID, w.Model, ch, calls, w.Usage, thinkTags)
}

// chatChoice0 returns choice 0, nil when there is none.
func chatChoice0(choices []chatChoice) *chatChoice {
	for i := range choices {
		if choices[i].Index == 0 {
			return &choices[i]
		}
	}
	return nil
}

// chatUnmarshalCompletion decodes a non-streamed body with encoding/json.
func chatUnmarshalCompletion(provider string, body []byte) (*chatCompletion, error) {
	w := new(chatCompletion)
	if err := json.Unmarshal(body, w); err != nil {
		msg := "malformed response"
		if len(bytes.TrimSpace(body)) > 0 && !json.Valid(body) {
			// Not JSON at all: say what it was, briefly.
			if pe := httpc.ErrorFromBody(provider, body); pe.Message != "" {
				msg += ": " + pe.Message
			}
		}
		return nil, &runlet.ProviderError{Provider: provider, Message: msg, Err: fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err)}
	}
	return w, nil
}

// chatConvertCompletion translates a decoded non-streamed body, choice 0
// (nil when there is none) and its tool calls. (The calls come apart from
// the choice so that the fast path's storage stays on the caller's stack.)
func chatConvertCompletion(provider, id, model string, ch *chatChoice, calls []chatRespCall, usage *chatUsage, thinkTags bool) (*runlet.ModelResponse, error) {
	if ch == nil {
		return nil, &runlet.ProviderError{Provider: provider, Message: "response has no choice 0",
			Err: runlet.ErrMalformedStream}
	}
	msg := runlet.Message{Role: runlet.RoleAssistant}
	reasoning := ch.Message.ReasoningContent.b
	if len(reasoning) == 0 {
		reasoning = ch.Message.Reasoning.b
	}
	var details string
	if entries := chatDetailsArray(ch.Message.ReasoningDetails); len(entries) > 0 {
		details = string(bytes.TrimSpace(ch.Message.ReasoningDetails))
		if len(reasoning) == 0 {
			reasoning = []byte(chatDetailsText(entries))
		}
	}
	var text []byte
	content := chatFixSurrogates(&ch.Message.Content)
	if thinkTags {
		var r, t []byte
		var th chatThink
		emit := func(isR bool, p []byte) {
			if isR {
				r = append(r, p...)
			} else {
				t = append(t, p...)
			}
		}
		th.feed(content, emit)
		th.flush(emit)
		if len(reasoning) == 0 {
			reasoning = r
		} else {
			reasoning = append(append([]byte(nil), reasoning...), r...)
		}
		text = t
	} else {
		text = content
	}
	if len(reasoning) > 0 || details != "" {
		msg.Parts = append(msg.Parts, runlet.ReasoningPart{Text: string(reasoning), Provider: provider, Details: details})
	}
	refusal := !ch.Message.Refusal.empty()
	if refusal {
		msg.Parts = append(msg.Parts, runlet.TextPart{Text: string(chatFixSurrogates(&ch.Message.Refusal))})
	} else if len(text) > 0 {
		msg.Parts = append(msg.Parts, runlet.TextPart{Text: string(text)})
		chatAttachCitations(&msg, chatCitations(provider, ch.Message.Annotations, string(text)))
	}
	for i, tc := range calls {
		args := chatFixSurrogates(&tc.Function.Arguments)
		if len(bytes.TrimSpace(args)) == 0 {
			args = []byte("{}")
		}
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(i)
		}
		sig := tc.ExtraContent.signature()
		if i == 0 && sig == "" {
			sig = ch.Message.ExtraContent.signature()
		}
		msg.Parts = append(msg.Parts, signedCall(runlet.ToolCallPart{ID: id, Name: tc.Function.Name,
			Arguments: json.RawMessage(string(args))}, sig, provider))
	}
	out := &runlet.ModelResponse{
		Message:      msg,
		FinishReason: chatFinish(ch.FinishReason, len(calls) > 0, refusal),
		ID:           id,
		Model:        model,
	}
	if usage != nil {
		out.Usage = usage.usage()
	}
	return out, nil
}

// chatFixSurrogates returns the text of a complete string field, turning
// held-back lone surrogates into U+FFFD as encoding/json would.
func chatFixSurrogates(s *chatStr) []byte {
	if s.hi == 0 && s.lo == 0 {
		return s.b
	}
	var out []byte
	if s.lo != 0 {
		out = append(out, "\uFFFD"...)
	}
	out = append(out, s.b...)
	if s.hi != 0 {
		out = append(out, "\uFFFD"...)
	}
	return out
}

// chatHasError reports whether an "error" field holds an error (not null,
// false or empty).
func chatHasError(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null" && string(raw) != "false" &&
		string(raw) != `""` && string(raw) != "{}"
}

// chatErrorEvent maps an error object received with status 200 (inside a
// stream or as the whole body) to a *runlet.ProviderError. A numeric code
// or status_code (OpenRouter, Groq) is the HTTP status it names
// (httpc.ErrorFromBody), which also decides whether it is retryable.
func chatErrorEvent(provider string, data []byte) *runlet.ProviderError {
	pe := httpc.ErrorFromBody(provider, data)
	switch pe.Type {
	case "server_error", "rate_limit_error", "overloaded_error", "api_error", "service_unavailable":
		pe.Retryable = true
	}
	if pe.Message == "" {
		pe.Message = "error in response"
	}
	return pe
}
