package openai

import (
	"fmt"
	"maps"
	"slices"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/wirejson"
)

// Wire types of a Responses request body. Only what the adapter writes is
// modelled; everything else reaches the body through ModelRequest.Options.
type respRequest struct {
	Model              string              `json:"model"`
	Instructions       string              `json:"instructions,omitempty"`
	PreviousResponseID string              `json:"previous_response_id,omitempty"`
	Input              []any               `json:"input"`
	Tools              []any               `json:"tools,omitempty"` // respTool, then built-in tools from the "tools" option
	ToolChoice         any                 `json:"tool_choice,omitempty"`
	Text               map[string]any      `json:"text,omitempty"`
	MaxOutputTokens    int                 `json:"max_output_tokens,omitempty"`
	Temperature        *float64            `json:"temperature,omitempty"`
	TopP               *float64            `json:"top_p,omitempty"`
	Reasoning          respReasoningConfig `json:"reasoning,omitzero"`
	Store              bool                `json:"store"`
	Include            []string            `json:"include,omitempty"`
	Stream             bool                `json:"stream,omitempty"`
}

// respReasoningConfig is the reasoning object: Settings.Reasoning's
// effort, and a summary ("auto") when it asks for one.
type respReasoningConfig struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// respMessage is an input message ("easy input message"). Content is a
// string or a list of input content parts.
type respMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// respOutputMessage is an assistant message sent back as the output item
// it was, with its ID (to follow the reasoning item that produced it).
type respOutputMessage struct {
	Type    string           `json:"type"`
	Role    string           `json:"role"`
	ID      string           `json:"id"`
	Status  string           `json:"status"`
	Content []respOutputText `json:"content"`
}

type respOutputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

type respInputText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type respInputImage struct {
	Type     string `json:"type"`
	ImageURL string `json:"image_url"`
	Detail   string `json:"detail"`
}

type respInputFile struct {
	Type     string `json:"type"`
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data,omitempty"`
	FileURL  string `json:"file_url,omitempty"`
}

type respFunctionCall struct {
	Type      string `json:"type"`
	ID        string `json:"id,omitempty"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type respFunctionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output any    `json:"output"` // a string, or []any of content items
}

type respReasoning struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Summary          []respInputText `json:"summary"`
	EncryptedContent string          `json:"encrypted_content,omitempty"`
}

type respTool struct {
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  any    `json:"parameters"`
	Strict      bool   `json:"strict"`
}

// Option keys the Responses adapter interprets; every other key is copied
// into the body as given.
const (
	respOptModel              = "model"
	respOptStore              = "store"
	respOptInclude            = "include"
	respOptPreviousResponseID = "previous_response_id"
	respOptStrict             = "strict"
	respOptReasoning          = "reasoning"
	respOptText               = "text"
	respOptTools              = "tools"

	respIncludeEncrypted = "reasoning.encrypted_content"
	// respChainAuto is the previous_response_id value that chains automatically.
	respChainAuto = "auto"
)

// respBuilt is a request ready to send.
type respBuilt struct {
	body []byte
	// store and auto tell remember whether to record the response for
	// automatic chaining.
	store, auto bool
	model       string
}

// buildRequest translates a runlet request into a Responses API body.
func (m *Responses) buildRequest(req *runlet.ModelRequest, stream bool) (respBuilt, error) {
	if m.r.err != nil {
		return respBuilt{}, m.r.err
	}
	return m.build(req, stream, true)
}

// build translates a request: written directly (respWrite) when fast is
// set and no option reshapes the body, else through the wire structs and
// encoding/json (always the same bytes; the tests compare the two).
func (m *Responses) build(req *runlet.ModelRequest, stream, fast bool) (respBuilt, error) {
	if err := req.Reasoning.Validate(); err != nil {
		return respBuilt{}, m.invalid("invalid settings", err)
	}
	w := respRequest{
		Model:           m.r.model,
		Instructions:    req.Instructions,
		MaxOutputTokens: req.MaxOutputTokens,
		Temperature:     req.Temperature,
		TopP:            req.TopP,
		Stream:          stream,
	}
	var (
		store, storeSet bool
		strict          bool
		prevID          string
		reasoning       bool
		extraTools      []any
		overlay         map[string]any
	)
	for k, v := range req.Options {
		var err error
		switch k {
		case respOptModel:
			s, ok := v.(string)
			if !ok || s == "" {
				err = fmt.Errorf("want a model name, got %T", v)
			}
			w.Model = s
		case respOptStore:
			store, storeSet = v.(bool)
			if !storeSet && v != nil {
				err = fmt.Errorf("want a bool, got %T", v)
			}
		case respOptStrict:
			var ok bool
			if strict, ok = v.(bool); !ok && v != nil {
				err = fmt.Errorf("want a bool, got %T", v)
			}
		case respOptPreviousResponseID:
			s, ok := v.(string)
			if !ok && v != nil {
				err = fmt.Errorf("want a response ID or %q, got %T", respChainAuto, v)
			}
			prevID = s
		case respOptInclude:
			w.Include, err = respStrings(v)
		case respOptTools:
			list, ok := v.([]any)
			if !ok && v != nil {
				if objs, isObjs := v.([]map[string]any); isObjs {
					for _, t := range objs {
						list = append(list, t)
					}
				} else {
					err = fmt.Errorf("want a list of tool objects, got %T", v)
				}
			}
			extraTools = list
		case respOptText:
			t, ok := v.(map[string]any)
			if !ok && v != nil {
				err = fmt.Errorf("want an object, got %T", v)
			}
			w.Text = maps.Clone(t)
		case "stream", "input":
			err = fmt.Errorf("set by the adapter")
		default:
			if k == respOptReasoning && v != nil {
				reasoning = true
			}
			if overlay == nil {
				overlay = make(map[string]any, len(req.Options))
			}
			overlay[k] = v
		}
		if err != nil {
			return respBuilt{}, m.invalid(fmt.Sprintf("invalid option %q", k), err)
		}
	}
	if w.Model == "" {
		return respBuilt{}, m.invalid(`no model: set Config.Model or the "model" option`, nil)
	}
	if len(req.HostedTools) > 0 {
		hosted, include, err := m.respHostedTools(req.HostedTools)
		if err != nil {
			return respBuilt{}, m.invalid("hosted tools", err)
		}
		if len(hosted) > 0 {
			extraTools = append(hosted, extraTools...)
		}
		for _, v := range include {
			if !slices.Contains(w.Include, v) {
				w.Include = append(w.Include, v)
			}
		}
	}
	// The neutral setting, unless the "reasoning" option replaces it.
	if rs := req.Reasoning; (rs.Effort != "" || rs.Summary) && !reasoning {
		w.Reasoning.Effort = string(rs.Effort)
		if rs.Summary {
			w.Reasoning.Summary = "auto"
		}
		reasoning = true
	}

	// Conversation state: stateless (full history) unless chaining.
	msgs := req.Messages
	auto := prevID == respChainAuto
	chained := prevID != ""
	if auto {
		prevID = ""
		if id, n, ok := m.chain.lookup(m.r.name, msgs); ok {
			prevID, msgs = id, msgs[n:]
		}
	} else if prevID != "" {
		msgs = msgs[respAfterLastAssistant(msgs):]
	}
	if prevID != "" && respEditedLast(req.Messages) {
		// The server's copy of the last response holds the call as the
		// model proposed it; a person changed it on approval. Send the
		// history, which holds the call that ran, instead.
		prevID, msgs = "", req.Messages
	}
	w.PreviousResponseID = prevID
	if !storeSet {
		store = chained
	}
	w.Store = store
	if !store && reasoning && !slices.Contains(w.Include, respIncludeEncrypted) {
		w.Include = append(w.Include, respIncludeEncrypted)
	}

	if fast && overlay == nil && w.Text == nil && extraTools == nil && !respHistoryHasHosted(msgs) {
		body, err := m.write(&w, req, msgs, strict)
		if err != nil {
			return respBuilt{}, err
		}
		return respBuilt{body: body, store: store, auto: auto, model: w.Model}, nil
	}

	input, err := m.translateMessages(msgs, store)
	if err != nil {
		return respBuilt{}, err
	}
	w.Input = input

	if n := len(req.Tools) + len(extraTools); n > 0 {
		w.Tools = make([]any, 0, n)
		for i, t := range req.Tools {
			if t.Name == "" {
				return respBuilt{}, m.invalid(fmt.Sprintf("tool %d has no name", i), nil)
			}
			tool := respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: emptyParams, Strict: strict}
			if t.InputSchema != nil {
				raw, err := schemajson.Marshal(t.InputSchema) // cached: tools go out every turn
				if err != nil {
					return respBuilt{}, m.invalid(fmt.Sprintf("tool %q schema", t.Name), err)
				}
				tool.Parameters = raw
			}
			w.Tools = append(w.Tools, tool)
		}
		w.Tools = append(w.Tools, extraTools...)
	}
	if tc, err := respToolChoice(req.ToolChoice); err != nil {
		return respBuilt{}, m.invalid("invalid tool choice", err)
	} else if tc != nil {
		w.ToolChoice = tc
	}
	if sch := req.OutputSchema; sch != nil && sch.Schema != nil {
		if _, set := w.Text["format"]; !set {
			if w.Text == nil {
				w.Text = make(map[string]any, 1)
			}
			name, raw, strict, err := outputFormat(sch)
			if err != nil {
				return respBuilt{}, m.invalid("output schema", err)
			}
			format := map[string]any{"type": "json_schema", "name": name, "schema": raw, "strict": strict}
			if sch.Description != "" {
				format["description"] = sch.Description
			}
			w.Text["format"] = format
		}
	}

	body, err := wirejson.Marshal(w)
	if err != nil {
		return respBuilt{}, m.invalid("encoding request", err)
	}
	if len(overlay) > 0 {
		if body, err = wirejson.Overlay(body, overlay); err != nil {
			return respBuilt{}, m.invalid("encoding request options", err)
		}
	}
	return respBuilt{body: body, store: store, auto: auto, model: w.Model}, nil
}

func (m *Responses) invalid(msg string, err error) *runlet.ProviderError {
	return httpc.RequestError(m.r.name, msg, err)
}

// respToolChoice is the Responses tool_choice.
func respToolChoice(tc runlet.ToolChoice) (any, error) {
	return toolChoice(tc, func(name string) any { return map[string]string{"type": "function", "name": name} })
}

// respStrings accepts []string or []any of strings (as decoded from JSON or YAML).
func respStrings(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []string:
		return slices.Clone(v), nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("want strings, got %T", e)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list of strings, got %T", v)
}
