package bedrock

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/wirejson"
)

// Option keys the adapter interprets; every other key is set on the body
// as given.
const (
	optModel        = "model"
	optCachePoint   = "cache_point"
	optAdditional   = "additionalModelRequestFields"
	optOutputConfig = "outputConfig"
)

// defaultThinkingHeadroom is added to a reasoning budget for maxTokens
// when the request sets none: Claude needs maxTokens above the budget.
const defaultThinkingHeadroom = 4096

// emptySchema is sent for a tool without an input schema: the API
// requires one.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// built is a request ready to send.
type built struct {
	url   string
	body  []byte
	model string
}

// buildRequest translates a runlet request into a Converse body.
func (m *Model) buildRequest(req *runlet.ModelRequest, stream bool) (built, error) {
	if req == nil {
		return built{}, m.invalid("nil request", nil)
	}
	if err := req.Reasoning.Validate(); err != nil {
		return built{}, m.invalid("invalid settings", err)
	}
	model := m.cfg.model
	var cache json.RawMessage
	var additional, outputConfig, overlay map[string]any
	for k, v := range req.Options {
		var err error
		switch k {
		case optModel:
			s, ok := v.(string)
			if !ok || s == "" {
				err = fmt.Errorf("want a model ID, got %T", v)
			}
			model = s
		case optCachePoint:
			cache, err = cachePointOption(v)
		case optAdditional, optOutputConfig:
			o, ok := v.(map[string]any)
			if !ok && v != nil {
				err = fmt.Errorf("want an object, got %T", v)
			}
			if k == optAdditional {
				additional = maps.Clone(o)
			} else {
				outputConfig = maps.Clone(o)
			}
		case "modelId", "messages", "system":
			err = fmt.Errorf("set by the adapter")
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
	if model == "" {
		return built{}, m.invalid("no model: set Config.Model or the \"model\" option", nil)
	}
	for i, h := range req.HostedTools {
		// Converse runs no provider tools; another provider's declaration
		// is not for it.
		if len(h.Declaration) == 0 || h.Provider == m.cfg.name {
			return built{}, m.invalid(fmt.Sprintf("hosted tool %d (%s): the Converse API runs no provider tools", i, cmp.Or(string(h.Kind), h.Provider)), nil)
		}
	}

	w := wireRequest{}
	var err error
	if w.Messages, err = m.encodeMessages(req.Messages); err != nil {
		return built{}, err
	}
	if req.Instructions != "" {
		text := req.Instructions
		w.System = append(w.System, wireSystem{Text: &text})
		if cache != nil {
			w.System = append(w.System, wireSystem{CachePoint: cache})
		}
	}
	inf := wireInference{MaxTokens: req.MaxOutputTokens, Temperature: req.Temperature, TopP: req.TopP, StopSequences: req.StopSequences}
	additional = applyReasoning(req.Reasoning, model, additional)
	if budget := req.Reasoning.BudgetTokens; budget > 0 && inf.MaxTokens == 0 && family(model) == "anthropic" {
		inf.MaxTokens = budget + defaultThinkingHeadroom
	}
	if inf.MaxTokens != 0 || inf.Temperature != nil || inf.TopP != nil || len(inf.StopSequences) > 0 {
		w.InferenceConfig = &inf
	}
	if w.ToolConfig, err = m.encodeTools(req, w.Messages, cache); err != nil {
		return built{}, err
	}
	if s := req.OutputSchema; s != nil && s.Schema != nil {
		if _, set := outputConfig["textFormat"]; !set {
			raw, err := schemajson.Marshal(s.Schema)
			if err != nil {
				return built{}, m.invalid("output schema", err)
			}
			def := map[string]any{"schema": string(raw), "name": schemaName(s.Name)}
			if s.Description != "" {
				def["description"] = s.Description
			}
			if outputConfig == nil {
				outputConfig = make(map[string]any, 1)
			}
			outputConfig["textFormat"] = map[string]any{"type": "json_schema", "structure": map[string]any{"jsonSchema": def}}
		}
	}
	if cache != nil && len(w.Messages) > 0 {
		last := &w.Messages[len(w.Messages)-1]
		last.Content = append(last.Content, wireBlock{CachePoint: cache})
	}
	w.AdditionalModelRequestFields, w.OutputConfig = additional, outputConfig

	body, err := wirejson.Marshal(&w)
	if err != nil {
		return built{}, m.invalid("encoding request", err)
	}
	if len(overlay) > 0 {
		if body, err = wirejson.Overlay(body, overlay); err != nil {
			return built{}, m.invalid("encoding request options", err)
		}
	}
	return built{url: m.cfg.endpoint(model, stream), body: body, model: model}, nil
}

func (m *Model) invalid(msg string, err error) *runlet.ProviderError {
	return httpc.RequestError(m.cfg.name, msg, err)
}

// cachePointOption reads the "cache_point" option: true is a default
// cache point, a string its TTL ("5m", "1h"), an object the block as
// given; false or nil none.
func cachePointOption(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if !v {
			return nil, nil
		}
		return json.RawMessage(`{"type":"default"}`), nil
	case string:
		return json.Marshal(map[string]string{"type": "default", "ttl": v})
	case map[string]any:
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("want true, a TTL string or an object, got %T", v)
}

// applyReasoning maps runlet.Reasoning into additionalModelRequestFields,
// in each model family's own terms (as recorded Bedrock traffic shows
// them accepted):
//
//	Claude      BudgetTokens: thinking {"type":"enabled","budget_tokens":N};
//	            else Effort: thinking {"type":"adaptive"} and output_config {"effort":E}
//	Amazon Nova Effort: reasoningConfig {"type":"enabled","maxReasoningEffort":E}
//	OpenAI      Effort: reasoning_effort
//	Qwen        Effort: reasoning_config
//
// Other families take neither (DeepSeek R1 always reasons). A field the
// option already set wins.
func applyReasoning(r runlet.Reasoning, model string, additional map[string]any) map[string]any {
	set := func(k string, v any) {
		if _, ok := additional[k]; ok {
			return
		}
		if additional == nil {
			additional = make(map[string]any, 2)
		}
		additional[k] = v
	}
	effort := string(r.Effort)
	switch family(model) {
	case "anthropic":
		switch {
		case r.BudgetTokens > 0:
			set("thinking", map[string]any{"type": "enabled", "budget_tokens": r.BudgetTokens})
		case effort != "":
			set("thinking", map[string]any{"type": "adaptive"})
			set("output_config", map[string]any{"effort": effort})
		}
	case "amazon":
		if effort != "" {
			set("reasoningConfig", map[string]any{"type": "enabled", "maxReasoningEffort": effort})
		}
	case "openai":
		if effort != "" {
			set("reasoning_effort", effort)
		}
	case "qwen":
		if effort != "" {
			set("reasoning_config", effort)
		}
	}
	return additional
}

// family is the provider part of a Bedrock model ID ("anthropic" for
// "us.anthropic.claude-..." or an ARN naming one).
func family(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 { // an ARN
		m = m[i+1:]
	}
	for _, f := range []string{"anthropic", "amazon", "openai", "qwen", "meta", "mistral", "deepseek", "cohere", "ai21", "writer", "moonshot"} {
		if strings.HasPrefix(m, f+".") || strings.Contains(m, "."+f+".") {
			return f
		}
	}
	if strings.Contains(m, "claude") {
		return "anthropic"
	}
	return ""
}

// schemaName fits an output schema's name to the API's (letters, digits,
// '_' and '-', at most 64).
func schemaName(s string) string {
	if s == "" {
		return "output"
	}
	s = toolID(s)
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// encodeTools builds toolConfig. ToolChoice none has no Converse
// equivalent: the tools are left out, unless the conversation holds tool
// calls or results, which the API accepts only with a toolConfig; then
// the tools are sent without a toolChoice (the model's own choice).
func (m *Model) encodeTools(req *runlet.ModelRequest, msgs []wireMessage, cache json.RawMessage) (*wireToolConfig, error) {
	if len(req.Tools) == 0 {
		return nil, nil
	}
	none := req.ToolChoice.Mode == runlet.ToolChoiceNone
	if none && !hasToolBlocks(msgs) {
		return nil, nil
	}
	tc := &wireToolConfig{Tools: make([]wireTool, 0, len(req.Tools)+1)}
	for _, t := range req.Tools {
		schema := emptySchema
		if t.InputSchema != nil {
			raw, err := schemajson.Marshal(t.InputSchema)
			if err != nil {
				return nil, m.invalid(fmt.Sprintf("tool %q: input schema", t.Name), err)
			}
			schema = raw
		}
		tc.Tools = append(tc.Tools, wireTool{ToolSpec: &wireToolSpec{Name: t.Name, Description: t.Description, InputSchema: wireInputSchema{JSON: schema}}})
	}
	if cache != nil {
		tc.Tools = append(tc.Tools, wireTool{CachePoint: cache})
	}
	switch req.ToolChoice.Mode {
	case "", runlet.ToolChoiceAuto, runlet.ToolChoiceNone:
	case runlet.ToolChoiceRequired:
		tc.ToolChoice = json.RawMessage(`{"any":{}}`)
	case runlet.ToolChoiceTool:
		if req.ToolChoice.Name == "" {
			return nil, m.invalid("tool choice: a named tool choice without a name", nil)
		}
		raw, _ := json.Marshal(map[string]any{"tool": map[string]string{"name": req.ToolChoice.Name}})
		tc.ToolChoice = raw
	default:
		return nil, m.invalid(fmt.Sprintf("tool choice: unknown mode %q", req.ToolChoice.Mode), nil)
	}
	return tc, nil
}

func hasToolBlocks(msgs []wireMessage) bool {
	for _, msg := range msgs {
		for _, b := range msg.Content {
			if b.ToolUse != nil || b.ToolResult != nil {
				return true
			}
		}
	}
	return false
}

// toolID makes a tool call ID acceptable to the API ([a-zA-Z0-9_-]+, at
// most 64 bytes), replacing other characters with '_', so calls made by
// other providers can be replayed; tool calls and results get the same
// mapping, so pairs still match.
func toolID(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// blob is bytes as the wire's base64.
func blob(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
