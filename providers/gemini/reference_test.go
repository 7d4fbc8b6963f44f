package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/wirejson"
)

// The request builder as it was before the body was written directly
// (encode.go): translate into the wire types, then marshal them. It is
// kept here as the reference the direct encoding must equal byte for byte.

type wireRequest struct {
	Contents          []wireContent   `json:"contents"`
	SystemInstruction *wireContent    `json:"systemInstruction,omitempty"`
	Tools             []wireTool      `json:"tools,omitempty"`
	ToolConfig        *wireToolConfig `json:"toolConfig,omitempty"`
	GenerationConfig  json.RawMessage `json:"generationConfig,omitempty"`
}

type wireTool struct {
	FunctionDeclarations []wireFunctionDecl `json:"functionDeclarations"`
}

type wireFunctionDecl struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type wireToolConfig struct {
	FunctionCallingConfig wireFunctionCalling `json:"functionCallingConfig"`
}

type wireFunctionCalling struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// toolConfig maps a tool choice to a functionCallingConfig; nil for the
// provider default.
func toolConfig(tc runlet.ToolChoice) *wireToolConfig {
	var c wireFunctionCalling
	switch tc.Mode {
	case runlet.ToolChoiceAuto:
		c.Mode = "AUTO"
	case runlet.ToolChoiceNone:
		c.Mode = "NONE"
	case runlet.ToolChoiceRequired:
		c.Mode = "ANY"
	case runlet.ToolChoiceTool:
		c.Mode, c.AllowedFunctionNames = "ANY", []string{tc.Name}
	default:
		return nil
	}
	return &wireToolConfig{FunctionCallingConfig: c}
}

// contents converts runlet messages to Gemini contents: assistant messages
// become "model" contents, user and tool messages "user" ones, and
// consecutive messages with the same role are merged. Messages left without
// parts are dropped.
func (m *Model) contents(msgs []runlet.Message, model string) ([]wireContent, error) {
	out := make([]wireContent, 0, len(msgs))
	names := map[string]string{} // tool call ID -> name, for function responses
	for i, msg := range msgs {
		role := "user"
		if msg.Role == runlet.RoleAssistant {
			role = "model"
		}
		var parts []wirePart
		if n := len(out); n > 0 && out[n-1].Role == role {
			parts = out[n-1].Parts
		}
		start := len(parts)
		for _, p := range msg.Parts {
			var err error
			if parts, err = m.appendPart(parts, p, names); err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
		}
		if role == "model" && needsSkipSignature(model) {
			firstCallSigned(parts[start:])
		}
		switch n := len(out); {
		case n > 0 && out[n-1].Role == role:
			out[n-1].Parts = parts
		case len(parts) > 0:
			out = append(out, wireContent{Role: role, Parts: parts})
		}
	}
	return out, nil
}

// firstCallSigned gives the first function call of a model turn the
// documented placeholder signature when it has none: Gemini signs the first
// call of each step and rejects a turn whose first call lost its signature.
func firstCallSigned(parts []wirePart) {
	for i := range parts {
		if parts[i].FunctionCall != nil {
			if parts[i].ThoughtSignature == "" {
				parts[i].ThoughtSignature = skipSignature
			}
			return
		}
	}
}

// appendPart appends the wire parts for one runlet part. Thought signatures
// go back only to the adapter (Name) that produced them.
func (m *Model) appendPart(parts []wirePart, p runlet.Part, names map[string]string) ([]wirePart, error) {
	own := func(provider string) bool { return provider == m.cfg.name }
	switch p := p.(type) {
	case runlet.TextPart:
		w := wirePart{Text: &p.Text}
		if own(p.Provider) {
			w.ThoughtSignature = p.Signature
		}
		if p.Text != "" || w.ThoughtSignature != "" {
			parts = append(parts, w)
		}
	case runlet.ReasoningPart:
		// Gemini reads nothing from unsigned thought text, and another
		// provider's reasoning means nothing to it.
		if own(p.Provider) && p.Signature != "" {
			parts = append(parts, wirePart{Text: &p.Text, Thought: true, ThoughtSignature: p.Signature})
		}
	case runlet.ToolCallPart:
		names[p.ID] = p.Name
		w := wirePart{FunctionCall: &wireFunctionCall{ID: p.ID, Name: p.Name, Args: wirejson.Object(p.Arguments)}}
		if own(p.Provider) {
			w.ThoughtSignature = p.Signature
		}
		parts = append(parts, w)
	case runlet.ToolResultPart:
		name := p.Name
		if name == "" {
			name = names[p.CallID]
		}
		resp := map[string]any{"output": p.Content}
		if p.IsError {
			resp = map[string]any{"error": p.Content}
		}
		parts = append(parts, wirePart{FunctionResponse: &wireFuncResponse{ID: p.CallID, Name: name, Response: resp}})
	case runlet.ImagePart:
		w, err := media(p.URL, p.MediaType, p.Data)
		if err != nil {
			return nil, fmt.Errorf("image part: %w", err)
		}
		parts = append(parts, w)
	case runlet.FilePart:
		w, err := media(p.URL, p.MediaType, p.Data)
		if err != nil {
			return nil, fmt.Errorf("file part %q: %w", p.Name, err)
		}
		parts = append(parts, w)
	}
	return parts, nil
}

// referenceBuild is the old buildRequest.
func (m *Model) referenceBuild(req *runlet.ModelRequest, stream bool) (url string, body []byte, err error) {
	if req == nil {
		return "", nil, m.invalid("nil request", nil)
	}
	if err := req.Reasoning.Validate(); err != nil {
		return "", nil, m.invalid("invalid settings", err)
	}
	model := m.cfg.model
	gen := wireGenerationConfig{
		Temperature:     req.Temperature,
		TopP:            req.TopP,
		MaxOutputTokens: req.MaxOutputTokens,
		StopSequences:   req.StopSequences,
	}
	var overlay, genOverlay map[string]any
	for k, v := range req.Options {
		var err error
		switch k {
		case optModel:
			s, ok := v.(string)
			if !ok || s == "" {
				err = fmt.Errorf("want a model name, got %T", v)
			}
			model = s
		case optThinkingBudget:
			n, ok := wirejson.ToInt(v)
			if !ok {
				err = fmt.Errorf("want an integer, got %v", v)
			}
			thinking(&gen)["thinkingBudget"] = n
		case optThinkingLevel:
			s, ok := v.(string)
			if !ok || s == "" {
				err = fmt.Errorf("want a level such as \"low\" or \"high\", got %v", v)
			}
			thinking(&gen)["thinkingLevel"] = s
		case optIncludeThoughts:
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("want a bool, got %T", v)
			}
			thinking(&gen)["includeThoughts"] = b
		case optGenerationConfig:
			g, ok := v.(map[string]any)
			if !ok {
				err = fmt.Errorf("want an object, got %T", v)
			}
			genOverlay = g
		case "alt", "stream":
			err = fmt.Errorf("set by the adapter (Generate or Stream)")
		default:
			if overlay == nil {
				overlay = make(map[string]any, len(req.Options))
			}
			overlay[k] = v
		}
		if err != nil {
			return "", nil, m.invalid(fmt.Sprintf("invalid option %q", k), err)
		}
	}
	if model == "" {
		return "", nil, m.invalid("no model: set Config.Model or the \"model\" option", nil)
	}
	applyReasoning(&gen, req.Reasoning)
	if s := req.OutputSchema; s != nil && s.Schema != nil {
		raw, err := schemajson.Marshal(s.Schema)
		if err != nil {
			return "", nil, m.invalid("output schema", err)
		}
		gen.ResponseMimeType, gen.ResponseJSONSchema = "application/json", raw
	}

	contents, err := m.contents(req.Messages, model)
	if err != nil {
		return "", nil, m.invalid("", err)
	}
	w := wireRequest{Contents: contents}
	if req.Instructions != "" {
		w.SystemInstruction = &wireContent{Parts: []wirePart{{Text: &req.Instructions}}}
	}
	if len(req.Tools) > 0 {
		decls := make([]wireFunctionDecl, len(req.Tools))
		for i, t := range req.Tools {
			decls[i] = wireFunctionDecl{Name: t.Name, Description: t.Description}
			if t.InputSchema != nil {
				raw, err := schemajson.Marshal(t.InputSchema) // cached: tools go out every turn
				if err != nil {
					return "", nil, m.invalid(fmt.Sprintf("tool %q: input schema", t.Name), err)
				}
				decls[i].ParametersJSONSchema = raw
			}
		}
		w.Tools = []wireTool{{FunctionDeclarations: decls}}
		w.ToolConfig = toolConfig(req.ToolChoice)
	}
	if w.GenerationConfig, err = wirejson.Marshal(gen); err != nil {
		return "", nil, m.invalid("encoding request", err)
	}
	if len(genOverlay) > 0 {
		if w.GenerationConfig, err = wirejson.Overlay(w.GenerationConfig, genOverlay); err != nil {
			return "", nil, m.invalid("encoding option \"generationConfig\"", err)
		}
	}
	if string(w.GenerationConfig) == "{}" {
		w.GenerationConfig = nil
	}
	if body, err = wirejson.Marshal(w); err != nil {
		return "", nil, m.invalid("encoding request", err)
	}
	if len(overlay) > 0 {
		if body, err = wirejson.Overlay(body, overlay); err != nil {
			return "", nil, m.invalid("encoding request options", err)
		}
	}
	return m.cfg.endpoint(model, stream), body, nil
}
