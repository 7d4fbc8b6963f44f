package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/wirejson"
)

// chatRequest is the body of POST /chat/completions, without the
// pass-through options (spliced in by chatMarshal).
type chatRequest struct {
	Model               string              `json:"model"`
	Messages            []chatMessage       `json:"messages"`
	Tools               []chatTool          `json:"tools,omitempty"`
	ToolChoice          any                 `json:"tool_choice,omitempty"`
	ResponseFormat      *chatResponseFormat `json:"response_format,omitempty"`
	Temperature         *float64            `json:"temperature,omitempty"`
	TopP                *float64            `json:"top_p,omitempty"`
	MaxTokens           int                 `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                 `json:"max_completion_tokens,omitempty"`
	Stop                []string            `json:"stop,omitempty"`
	Stream              bool                `json:"stream,omitempty"`
	StreamOptions       *chatStreamOptions  `json:"stream_options,omitempty"`
}

// clear drops the generated value of a top-level key that an option
// replaces; it reports whether the key is one of the struct's.
func (r *chatRequest) clear(key string) bool {
	switch key {
	case "model":
		r.Model = ""
	case "tools":
		r.Tools = nil
	case "tool_choice":
		r.ToolChoice = nil
	case "response_format":
		r.ResponseFormat = nil
	case "temperature":
		r.Temperature = nil
	case "top_p":
		r.TopP = nil
	case "max_tokens":
		r.MaxTokens = 0
	case "max_completion_tokens":
		r.MaxCompletionTokens = 0
	case "stop":
		r.Stop = nil
	case "stream_options":
		r.StreamOptions = nil
	default:
		return false
	}
	return true
}

type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role             string         `json:"role"`
	Content          any            `json:"content,omitempty"` // string or []chatContentPart
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	Reasoning        string         `json:"reasoning,omitempty"`
	// ReasoningDetails is the array received with this message, unchanged.
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`
}

type chatContentPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text,omitempty"`
	ImageURL   *chatImageURL   `json:"image_url,omitempty"`
	InputAudio *chatInputAudio `json:"input_audio,omitempty"`
	File       *chatFile       `json:"file,omitempty"`
}

type chatImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type chatInputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type chatFile struct {
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data"`
}

type chatToolCall struct {
	ID           string            `json:"id"`
	Type         string            `json:"type"`
	Function     chatFunctionCall  `json:"function"`
	ExtraContent *chatExtraContent `json:"extra_content,omitempty"`
}

type chatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  any    `json:"parameters"`
	Strict      bool   `json:"strict,omitempty"`
}

type chatResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *chatJSONSchema `json:"json_schema,omitempty"`
}

type chatJSONSchema struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Schema      any    `json:"schema,omitempty"`
	Strict      bool   `json:"strict,omitempty"`
}

// chatEmptyParams is the parameters schema of a tool that declares none.
var chatEmptyParams = json.RawMessage(`{"type":"object","properties":{}}`)

// chatBuilt is a request body ready to send, plus the options that shape
// how the response is read.
type chatBuilt struct {
	body      []byte
	thinkTags bool
	model     string
}

// chatControl holds the options the adapter interprets instead of sending.
type chatControl struct {
	model            string
	strict           bool
	maxTokensField   string
	sendReasoning    string
	thinkTags        bool
	instructionsRole string
}

// buildRequest encodes req; a request it cannot build is a
// *runlet.ProviderError wrapping runlet.ErrInvalidRequest.
func (m *ChatCompletions) buildRequest(req *runlet.ModelRequest, stream bool) (chatBuilt, error) {
	b, err := m.build(req, stream)
	if err != nil {
		return chatBuilt{}, httpc.RequestError(m.r.name, "", err)
	}
	return b, nil
}

func (m *ChatCompletions) build(req *runlet.ModelRequest, stream bool) (chatBuilt, error) {
	if req == nil {
		return chatBuilt{}, fmt.Errorf("nil request")
	}
	ctl := chatControl{
		model:            m.r.model,
		maxTokensField:   m.maxTokensField,
		sendReasoning:    m.sendReasoning,
		instructionsRole: "system",
	}
	var extra []string // pass-through option keys, sorted
	for k, v := range req.Options {
		var err error
		switch k {
		case "model":
			ctl.model, err = chatOptString(k, v)
		case "strict":
			ctl.strict, err = chatOptBool(k, v)
		case "think_tags":
			ctl.thinkTags, err = chatOptBool(k, v)
		case "max_tokens_field":
			ctl.maxTokensField, err = chatOptString(k, v)
			if err == nil && ctl.maxTokensField != "max_tokens" && ctl.maxTokensField != "max_completion_tokens" {
				err = fmt.Errorf("option %q must be \"max_tokens\" or \"max_completion_tokens\", not %q", k, ctl.maxTokensField)
			}
		case "instructions_role":
			ctl.instructionsRole, err = chatOptString(k, v)
			if err == nil && ctl.instructionsRole != "system" && ctl.instructionsRole != "developer" {
				err = fmt.Errorf("option %q must be \"system\" or \"developer\", not %q", k, ctl.instructionsRole)
			}
		case "send_reasoning":
			switch v := v.(type) {
			case bool:
				ctl.sendReasoning = ""
				if v {
					ctl.sendReasoning = "reasoning_content"
				}
			case string:
				if v != "" && v != "reasoning_content" && v != "reasoning" {
					err = fmt.Errorf("option %q must be true, false, \"reasoning_content\" or \"reasoning\", not %q", k, v)
				}
				ctl.sendReasoning = v
			default:
				err = fmt.Errorf("option %q must be a bool or a string, not %T", k, v)
			}
		case "messages", "stream":
			err = fmt.Errorf("option %q is set by the adapter and cannot be overridden", k)
		default:
			extra = append(extra, k)
		}
		if err != nil {
			return chatBuilt{}, err
		}
	}
	slices.Sort(extra)

	r := chatRequest{Model: ctl.model}
	msgs, err := chatMessages(req, m.r.name, &ctl)
	if err != nil {
		return chatBuilt{}, err
	}
	r.Messages = msgs
	if len(req.Tools) > 0 {
		r.Tools = make([]chatTool, len(req.Tools))
		for i, t := range req.Tools {
			var params any = chatEmptyParams
			if t.InputSchema != nil {
				raw, err := schemajson.Marshal(t.InputSchema) // cached: tools go out every turn
				if err != nil {
					return chatBuilt{}, fmt.Errorf("tool %q: %w", t.Name, err)
				}
				params = raw
			}
			r.Tools[i] = chatTool{Type: "function", Function: chatFunction{
				Name: t.Name, Description: t.Description, Parameters: params, Strict: ctl.strict,
			}}
		}
		if r.ToolChoice, err = chatToolChoice(req.ToolChoice); err != nil {
			return chatBuilt{}, err
		}
	}
	if os := req.OutputSchema; os != nil {
		name, raw, strict, err := outputFormat(os)
		if err != nil {
			return chatBuilt{}, fmt.Errorf("output schema: %w", err)
		}
		js := &chatJSONSchema{Name: name, Description: os.Description, Strict: strict}
		if os.Schema != nil {
			js.Schema = raw
		}
		r.ResponseFormat = &chatResponseFormat{Type: "json_schema", JSONSchema: js}
	}
	r.Temperature, r.TopP = req.Temperature, req.TopP
	if n := req.MaxOutputTokens; n > 0 {
		if ctl.maxTokensField == "max_completion_tokens" {
			r.MaxCompletionTokens = n
		} else {
			r.MaxTokens = n
		}
	}
	r.Stop = req.StopSequences
	if stream {
		r.Stream = true
		r.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	}
	body, err := chatMarshal(&r, req.Options, extra)
	if err != nil {
		return chatBuilt{}, err
	}
	return chatBuilt{body: body, thinkTags: ctl.thinkTags, model: ctl.model}, nil
}

// chatMarshal encodes r and splices in the pass-through options, which
// replace generated keys of the same name; a nil option removes the key.
func chatMarshal(r *chatRequest, opts map[string]any, extra []string) ([]byte, error) {
	for _, k := range extra {
		r.clear(k)
	}
	var buf bytes.Buffer
	buf.Grow(1024)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	body := bytes.TrimRight(buf.Bytes(), "\n")
	if len(extra) == 0 {
		return body, nil
	}
	body = body[:len(body)-1] // drop '}'
	for _, k := range extra {
		v := opts[k]
		if v == nil {
			continue
		}
		raw, err := wirejson.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("option %q: %w", k, err)
		}
		key, _ := wirejson.Marshal(k)
		body = append(body, ',')
		body = append(body, key...)
		body = append(body, ':')
		body = append(body, raw...)
	}
	return append(body, '}'), nil
}

func chatOptString(key string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("option %q must be a string, not %T", key, v)
	}
	return s, nil
}

func chatOptBool(key string, v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("option %q must be a bool, not %T", key, v)
	}
	return b, nil
}

// toolChoice maps a ToolChoice onto the tool_choice value both OpenAI APIs
// take: a mode string, or named(name) for one tool (which the two APIs
// shape differently).
func toolChoice(tc runlet.ToolChoice, named func(name string) any) (any, error) {
	switch tc.Mode {
	case "":
		return nil, nil
	case runlet.ToolChoiceAuto, runlet.ToolChoiceNone, runlet.ToolChoiceRequired:
		return string(tc.Mode), nil
	case runlet.ToolChoiceTool:
		if tc.Name == "" {
			return nil, fmt.Errorf("tool choice %q needs a tool name", tc.Mode)
		}
		return named(tc.Name), nil
	}
	return nil, fmt.Errorf("unknown tool choice mode %q", tc.Mode)
}

// chatToolChoice is the Chat Completions tool_choice.
func chatToolChoice(tc runlet.ToolChoice) (any, error) {
	return toolChoice(tc, func(name string) any {
		return map[string]any{"type": "function", "function": map[string]string{"name": name}}
	})
}
