package anthropic

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/wirejson"
)

// The request builder as it was before the body was written directly
// (encode.go): translate into wire types, then marshal them. It is kept
// here as the reference the direct encoding must equal byte for byte.

type wireRequest struct {
	Model         string         `json:"model"`
	MaxTokens     int            `json:"max_tokens"`
	System        any            `json:"system,omitempty"` // string, or []wireContent with cache_control
	Messages      []wireMessage  `json:"messages"`
	Tools         []wireTool     `json:"tools,omitempty"`
	ToolChoice    map[string]any `json:"tool_choice,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	StopSequences []string       `json:"stop_sequences,omitempty"`
	Thinking      any            `json:"thinking,omitempty"`
	OutputConfig  map[string]any `json:"output_config,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
}

type wireMessage struct {
	Role    string        `json:"role"`
	Content []wireContent `json:"content"`
}

// wireContent is one request content block; the fields set depend on Type.
type wireContent struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Source    *wireSource     `json:"source,omitempty"`
	Title     string          `json:"title,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	// CacheControl is a prompt-caching breakpoint (see the cache_control option).
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// referenceBuild translates a runlet request into a Messages API body.
func (m *Messages) referenceBuild(req *runlet.ModelRequest, stream bool) (built, error) {
	if req == nil {
		return built{}, m.invalid("nil request", nil)
	}
	if err := req.Reasoning.Validate(); err != nil {
		return built{}, m.invalid("invalid settings", err)
	}
	cfg := &m.cfg
	w := wireRequest{
		Model:         cfg.model,
		MaxTokens:     req.MaxOutputTokens,
		Temperature:   req.Temperature,
		TopP:          req.TopP,
		StopSequences: req.StopSequences,
		Stream:        stream,
	}
	if samplingRemoved(cfg.version) {
		w.Temperature, w.TopP = nil, nil
	}
	defaultMax := false
	if w.MaxTokens <= 0 {
		w.MaxTokens = cfg.maxTokens
	}
	if w.MaxTokens <= 0 {
		w.MaxTokens, defaultMax = DefaultMaxTokens, true
	}

	// Options: interpreted keys first; the rest overlay the finished body.
	var out built
	var cacheControl json.RawMessage
	var overlay map[string]any
	disableParallel := false
	thinkingSet := false
	for k, v := range req.Options {
		var err error
		switch k {
		case optModel:
			s, ok := v.(string)
			if !ok || s == "" {
				err = fmt.Errorf("want a model name, got %T", v)
			}
			w.Model = s
		case optMaxTokens:
			n, ok := wirejson.ToInt(v)
			if !ok || n <= 0 {
				err = fmt.Errorf("want a positive integer, got %v", v)
			}
			w.MaxTokens, defaultMax = n, false
		case optThinking:
			w.Thinking, err = thinkingOption(v)
			thinkingSet = true
		case optCacheControl:
			cacheControl, err = cacheControlOption(v)
		case optBetas:
			out.betas, err = betasOption(v)
		case optDisableParallelToolUse:
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("want a bool, got %T", v)
			}
			disableParallel = b
		case "stream":
			err = fmt.Errorf("set by the adapter (Generate or Stream)")
		case optOutputConfig:
			oc, ok := v.(map[string]any)
			if !ok && v != nil {
				err = fmt.Errorf("want an object, got %T", v)
			}
			w.OutputConfig = maps.Clone(oc)
		default:
			if overlay == nil {
				overlay = make(map[string]any, len(req.Options))
			}
			overlay[k] = v
		}
		if err != nil {
			return built{}, m.invalid(fmt.Sprintf("invalid option %q", k), err)
		}
	}
	if w.Model == "" {
		return built{}, m.invalid("no model: set Config.Model or the \"model\" option", nil)
	}
	var rerr error
	if w.Thinking, w.OutputConfig, rerr = applyReasoning(req.Reasoning, w.Model, w.Thinking, thinkingSet, w.OutputConfig); rerr != nil {
		return built{}, m.invalid("invalid settings", rerr)
	}
	// Extended thinking needs max_tokens above its budget; raise a default
	// max_tokens rather than fail, but never one the caller chose.
	if budget := thinkingBudget(w.Thinking); defaultMax && budget >= w.MaxTokens {
		w.MaxTokens = budget + DefaultMaxTokens
	}
	if req.OutputSchema != nil && req.OutputSchema.Schema != nil {
		if w.OutputConfig == nil {
			w.OutputConfig = make(map[string]any, 1)
		}
		if _, set := w.OutputConfig["format"]; !set {
			raw, err := outputSchemaJSON(req.OutputSchema.Schema)
			if err != nil {
				return built{}, m.invalid("output schema", err)
			}
			w.OutputConfig["format"] = map[string]any{"type": "json_schema", "schema": raw}
		}
	}

	if req.Instructions != "" {
		if cacheControl != nil {
			w.System = []wireContent{{Type: "text", Text: req.Instructions, CacheControl: cacheControl}}
		} else {
			w.System = req.Instructions
		}
	}
	msgs, err := m.refTranslateMessages(req.Messages)
	if err != nil {
		return built{}, err
	}
	w.Messages = msgs
	if len(req.Tools) > 0 {
		w.Tools = make([]wireTool, len(req.Tools))
		for i, t := range req.Tools {
			w.Tools[i] = wireTool{Name: t.Name, Description: t.Description, InputSchema: emptySchema}
			if t.InputSchema != nil {
				raw, err := schemajson.Marshal(t.InputSchema) // cached: tools go out every turn
				if err != nil {
					return built{}, m.invalid(fmt.Sprintf("tool %q: input schema", t.Name), err)
				}
				w.Tools[i].InputSchema = raw
			}
		}
		w.ToolChoice = refToolChoice(req.ToolChoice, disableParallel)
	}
	if cacheControl != nil {
		if n := len(w.Tools); n > 0 {
			w.Tools[n-1].CacheControl = cacheControl
		}
		refMarkLastBlock(w.Messages, cacheControl)
	}

	body, err := wirejson.Marshal(w)
	if err != nil {
		return built{}, m.invalid("encoding request", err)
	}
	if len(overlay) > 0 {
		if body, err = wirejson.Overlay(body, overlay); err != nil {
			return built{}, m.invalid("encoding request options", err)
		}
	}
	out.body, out.model = body, w.Model
	return out, nil
}

// translateMessages converts runlet messages to the API's alternating
// user/assistant messages. RoleTool messages become user messages of
// tool_result blocks; consecutive messages with the same API role are merged,
// and within a user message tool_result blocks come first, as the API
// requires. Messages left without blocks are dropped.
func (m *Messages) refTranslateMessages(msgs []runlet.Message) ([]wireMessage, error) {
	out := make([]wireMessage, 0, len(msgs))
	for i, msg := range msgs {
		role := "user"
		if msg.Role == runlet.RoleAssistant {
			role = "assistant"
		}
		var blocks []wireContent
		if n := len(out); n > 0 && out[n-1].Role == role {
			blocks = out[n-1].Content
		}
		start := len(blocks)
		for _, p := range msg.Parts {
			var err error
			if blocks, err = m.refAppendPart(blocks, p); err != nil {
				return nil, m.invalid(fmt.Sprintf("message %d", i), err)
			}
		}
		if len(blocks) == start {
			continue
		}
		if start > 0 {
			out[len(out)-1].Content = blocks
		} else {
			out = append(out, wireMessage{Role: role, Content: blocks})
		}
	}
	for i := range out {
		if out[i].Role == "user" {
			refToolResultsFirst(out[i].Content)
		}
	}
	return out, nil
}

// toolResultsFirst moves tool_result blocks to the front, keeping order.
func refToolResultsFirst(blocks []wireContent) {
	sorted := true
	seenOther := false
	for i := range blocks {
		if blocks[i].Type != "tool_result" {
			seenOther = true
		} else if seenOther {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	slices.SortStableFunc(blocks, func(a, b wireContent) int {
		ra, rb := a.Type == "tool_result", b.Type == "tool_result"
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
}

// appendPart appends the blocks for one part.
func (m *Messages) refAppendPart(blocks []wireContent, p runlet.Part) ([]wireContent, error) {
	switch p := p.(type) {
	case runlet.TextPart:
		if p.Text != "" { // the API rejects empty text blocks
			blocks = append(blocks, wireContent{Type: "text", Text: p.Text})
		}
	case runlet.ReasoningPart:
		// Continuation state goes back only to the provider that made it.
		if p.Provider != m.cfg.name {
			break
		}
		switch {
		case p.Signature != "":
			text := p.Text
			blocks = append(blocks, wireContent{Type: "thinking", Thinking: &text, Signature: p.Signature})
		case p.Encrypted != "":
			blocks = append(blocks, wireContent{Type: "redacted_thinking", Data: p.Encrypted})
		}
	case runlet.ToolCallPart:
		blocks = append(blocks, wireContent{Type: "tool_use", ID: toolID(p.ID), Name: p.Name, Input: wirejson.Object(p.Arguments)})
	case runlet.ToolResultPart:
		c := wireContent{Type: "tool_result", ToolUseID: toolID(p.CallID), IsError: p.IsError}
		if p.Content != "" {
			c.Content = &p.Content
		}
		blocks = append(blocks, c)
	case runlet.ImagePart:
		src := source(p.URL, p.MediaType, p.Data, false)
		if src == nil {
			return nil, fmt.Errorf("image part has neither URL nor data")
		}
		blocks = append(blocks, wireContent{Type: "image", Source: src})
	case runlet.FilePart:
		image := strings.HasPrefix(p.MediaType, "image/")
		src := source(p.URL, p.MediaType, p.Data, !image)
		switch {
		case src == nil:
			return nil, fmt.Errorf("file part %q has neither URL nor data", p.Name)
		case image:
			blocks = append(blocks, wireContent{Type: "image", Source: src})
		default:
			blocks = append(blocks, wireContent{Type: "document", Source: src, Title: p.Name})
		}
	}
	return blocks, nil
}

func refToolChoice(tc runlet.ToolChoice, disableParallel bool) map[string]any {
	var c map[string]any
	switch tc.Mode {
	case runlet.ToolChoiceAuto:
		c = map[string]any{"type": "auto"}
	case runlet.ToolChoiceRequired:
		c = map[string]any{"type": "any"}
	case runlet.ToolChoiceTool:
		c = map[string]any{"type": "tool", "name": tc.Name}
	case runlet.ToolChoiceNone:
		return map[string]any{"type": "none"}
	}
	if disableParallel {
		if c == nil {
			c = map[string]any{"type": "auto"}
		}
		c["disable_parallel_tool_use"] = true
	}
	return c
}

// refMarkLastBlock puts a cache breakpoint on the last block of the last
// message that can carry one (thinking blocks cannot).
func refMarkLastBlock(msgs []wireMessage, cc json.RawMessage) {
	if len(msgs) == 0 {
		return
	}
	blocks := msgs[len(msgs)-1].Content
	for i := len(blocks) - 1; i >= 0; i-- {
		if t := blocks[i].Type; t != "thinking" && t != "redacted_thinking" {
			blocks[i].CacheControl = cc
			return
		}
	}
}
