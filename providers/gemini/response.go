package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/wirejson"
)

// wireResponse is a GenerateContentResponse: the body of generateContent
// and each event of streamGenerateContent. Error is set when the API
// reports a failure inside a stream.
type wireResponse struct {
	Candidates     []wireCandidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason        string `json:"blockReason"`
		BlockReasonMessage string `json:"blockReasonMessage"`
	} `json:"promptFeedback"`
	UsageMetadata *wireUsage      `json:"usageMetadata"`
	ModelVersion  string          `json:"modelVersion"`
	ResponseID    string          `json:"responseId"`
	Error         json.RawMessage `json:"error"`
}

type wireCandidate struct {
	Content       wireContent `json:"content"`
	FinishReason  string      `json:"finishReason"`
	FinishMessage string      `json:"finishMessage"`
	Index         int         `json:"index"`
	// What built-in tools did (see hosted.go).
	GroundingMetadata  json.RawMessage `json:"groundingMetadata"`
	URLContextMetadata json.RawMessage `json:"urlContextMetadata"`
}

type wireUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
}

// usage converts usageMetadata. Gemini counts thoughts apart from the
// candidates; runlet's OutputTokens includes reasoning, so it is
// candidates + thoughts. Tool-use prompt tokens (server-side tools) count
// as input. The cached part of the prompt is also in CachedInputTokens.
func (u *wireUsage) usage() runlet.Usage {
	if u == nil {
		return runlet.Usage{Requests: 1}
	}
	in := u.PromptTokenCount + u.ToolUsePromptTokenCount
	out := u.CandidatesTokenCount + u.ThoughtsTokenCount
	total := u.TotalTokenCount
	if total == 0 {
		total = in + out
	}
	return runlet.Usage{
		InputTokens:       in,
		OutputTokens:      out,
		TotalTokens:       total,
		ReasoningTokens:   u.ThoughtsTokenCount,
		CachedInputTokens: u.CachedContentTokenCount,
		Requests:          1,
	}
}

// ErrMalformedFunctionCall is wrapped by the *runlet.ProviderError returned
// when Gemini ends a turn because the model produced a function call it
// could not parse or should not have made (finish reasons
// MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS). The
// error's Code is the finish reason, and it is Retryable: the same request
// usually succeeds on another try.
var ErrMalformedFunctionCall = errors.New("gemini: malformed function call")

// finishReason maps a candidate's finishReason. A blocked answer (safety,
// recitation, blocklist, prohibited content, personal data, and a blocked
// prompt) is FinishContentFilter; STOP with function calls is
// FinishToolCalls.
func finishReason(reason string, hasCalls bool) runlet.FinishReason {
	switch reason {
	case "STOP", "":
		if hasCalls {
			return runlet.FinishToolCalls
		}
		return runlet.FinishStop
	case "MAX_TOKENS":
		return runlet.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return runlet.FinishContentFilter
	}
	return runlet.FinishOther
}

// functionCallFailure reports the finish reasons that mean a failed
// function call rather than an answer.
func functionCallFailure(reason string) bool {
	switch reason {
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS":
		return true
	}
	return false
}

// assembler builds the response from GenerateContentResponses: the whole
// one of generateContent, or the chunks of a stream. It keeps each thought
// signature on the part that carried it. In a stream, consecutive text (or
// thought) chunks grow one part, which takes the signature one of them
// carries: on its first chunk (Gemini 2.5) or on an empty trailing one
// (Gemini 3). The stream then assembles to the parts generateContent
// returns for the same answer. A second signature starts a new part.
type assembler struct {
	name  string
	parts []runlet.Part
	// open is set while a text or thought part may still grow: its text
	// is in buf, and it joins parts when flushed (boxed once, complete).
	open        bool
	openThought bool   // the open part is a thought
	openSig     string // the open part's signature
	buf         strings.Builder
	calls       int
	finish      string
	message     string
	blocked     string    // promptFeedback.blockReason
	usage       wireUsage // the last usageMetadata (zero: none)
	id          string
	model       string
	finished    bool // a finish reason or prompt block arrived
	size        httpc.Budget
	// The candidate's groundingMetadata and urlContextMetadata (the last).
	grounding, urlContext json.RawMessage
}

// add takes one response or chunk and calls emit for each delta (emit may
// be nil). It returns an error for an error chunk.
func (a *assembler) add(r *wireResponse, emit func(runlet.StreamEvent)) error {
	if len(r.Error) > 0 && string(r.Error) != "null" {
		e := httpc.ErrorFromBody(a.name, append(append([]byte(`{"error":`), r.Error...), '}'))
		if e.Message == "" {
			e.Message = "error event in stream"
		}
		return e
	}
	if r.ResponseID != "" {
		a.id = r.ResponseID
	}
	if r.ModelVersion != "" {
		a.model = r.ModelVersion
	}
	if r.UsageMetadata != nil {
		a.usage = *r.UsageMetadata // cumulative: the last one counts; copied, as the fast path reuses its storage
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		a.blocked, a.message, a.finished = r.PromptFeedback.BlockReason, r.PromptFeedback.BlockReasonMessage, true
	}
	for i := range r.Candidates {
		c := &r.Candidates[i]
		if c.Index != 0 {
			continue // other candidates (candidateCount > 1) are not returned
		}
		for j := range c.Content.Parts {
			a.part(&c.Content.Parts[j], emit)
			if err := a.size.Err(); err != nil {
				return err
			}
		}
		if c.FinishReason != "" {
			a.finish, a.message, a.finished = c.FinishReason, c.FinishMessage, true
		}
		if len(bytes.TrimSpace(c.GroundingMetadata)) > 2 { // not {}: streams send {} until the last chunk
			_ = a.size.Add(len(c.GroundingMetadata))
			a.grounding = append(a.grounding[:0], c.GroundingMetadata...)
		}
		if len(bytes.TrimSpace(c.URLContextMetadata)) > 2 {
			_ = a.size.Add(len(c.URLContextMetadata))
			a.urlContext = append(a.urlContext[:0], c.URLContextMetadata...)
		}
	}
	return nil
}

func (a *assembler) part(p *wirePart, emit func(runlet.StreamEvent)) {
	sig := p.ThoughtSignature
	n := len(sig)
	if p.Text != nil {
		n += len(*p.Text)
	}
	if fc := p.FunctionCall; fc != nil {
		n += len(fc.ID) + len(fc.Name) + len(fc.Args)
	}
	_ = a.size.Add(n)
	switch {
	case p.ExecutableCode != nil || p.CodeExecutionResult != nil:
		_ = a.size.Add(len(p.Raw))
		a.flush()
		_ = a.size.AddParts(1)
		a.codePart(p)
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		argsJSON := wirejson.CompactOwned(fc.Args) // args are a copy or slice the body: ours
		a.flush()
		_ = a.size.AddParts(1)
		a.parts = append(a.parts, runlet.ToolCallPart{ID: fc.ID, Name: fc.Name, Arguments: argsJSON, Signature: sig, Provider: a.name})
		if emit != nil {
			emit(runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: a.calls, ID: fc.ID, Name: fc.Name, Delta: string(argsJSON)})
		}
		a.calls++
	case p.Text != nil:
		text := *p.Text
		kind := runlet.StreamTextDelta
		if p.Thought {
			kind = runlet.StreamReasoningDelta
		}
		if a.open && p.Thought == a.openThought && (sig == "" || a.openSig == "") {
			if sig != "" {
				a.openSig = sig
			}
			a.grow(kind, text, emit)
			return
		}
		if text == "" && sig == "" {
			return // the empty part a stream ends with
		}
		a.flush()
		a.open, a.openThought, a.openSig = true, p.Thought, sig
		a.grow(kind, text, emit)
	}
	// Other parts (inline data, ...) are skipped.
}

// grow appends text to the open part (kept in a builder, so a long stream
// of small chunks is not copied over and over) and emits it.
func (a *assembler) grow(kind runlet.StreamEventKind, text string, emit func(runlet.StreamEvent)) {
	a.buf.WriteString(text)
	if emit != nil && text != "" {
		emit(runlet.StreamEvent{Kind: kind, Delta: text})
	}
}

// flush adds the open part, its text taken from the builder.
func (a *assembler) flush() {
	if !a.open {
		return
	}
	a.open = false
	_ = a.size.AddParts(1) // add reports it
	if a.openThought {
		a.parts = append(a.parts, runlet.ReasoningPart{Text: a.buf.String(), Signature: a.openSig, Provider: a.name})
	} else {
		a.parts = append(a.parts, runlet.TextPart{Text: a.buf.String(), Signature: a.openSig, Provider: a.name})
	}
	a.buf.Reset()
}

// response returns the assembled response, or a typed error for a turn
// that ended in a failed function call.
func (a *assembler) response() (*runlet.ModelResponse, error) {
	if functionCallFailure(a.finish) {
		msg := a.message
		if msg == "" {
			msg = "the model produced an invalid function call"
		}
		return nil, &runlet.ProviderError{Provider: a.name, Code: a.finish, Message: msg, Retryable: true, Err: ErrMalformedFunctionCall}
	}
	a.flush()
	finish := finishReason(a.finish, a.calls > 0)
	if a.blocked != "" {
		finish = runlet.FinishContentFilter
	}
	parts, searches := a.parts, 0
	if a.grounding != nil || a.urlContext != nil {
		parts, searches = grounded(a.name, parts, a.grounding, a.urlContext)
	}
	if parts == nil {
		parts = []runlet.Part{}
	}
	usage := a.usage.usage()
	usage.WebSearchRequests = searches
	return &runlet.ModelResponse{
		Message:      runlet.Message{Role: runlet.RoleAssistant, Parts: parts},
		Usage:        usage,
		FinishReason: finish,
		ID:           a.id,
		Model:        a.model,
	}, nil
}
