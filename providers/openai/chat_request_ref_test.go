package openai

// The request builder as it was before the body was written directly
// (chat_write.go): wire structs encoded with encoding/json. The tests hold
// the direct writer to it byte for byte (TestChatWriteMatchesReference,
// FuzzChatWrite).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/runlet/runlet"
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
	ReasoningEffort     string              `json:"reasoning_effort,omitempty"`
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
	case "reasoning_effort":
		r.ReasoningEffort = ""
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

func (m *ChatCompletions) buildRef(req *runlet.ModelRequest, stream bool) (chatBuilt, error) {
	if req == nil {
		return chatBuilt{}, fmt.Errorf("nil request")
	}
	if err := req.Reasoning.Validate(); err != nil {
		return chatBuilt{}, err
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
	msgs, err := chatMessagesRef(req, m.r.name, &ctl)
	if err != nil {
		return chatBuilt{}, err
	}
	r.Messages = msgs
	if len(req.Tools) > 0 {
		r.Tools = make([]chatTool, len(req.Tools))
		for i, t := range req.Tools {
			var params any = emptyParams
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
		if r.ToolChoice, err = chatToolChoiceRef(req.ToolChoice); err != nil {
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
	r.ReasoningEffort = string(req.Reasoning.Effort)
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

// chatMessages translates the instructions and history.
func chatMessagesRef(req *runlet.ModelRequest, provider string, ctl *chatControl) ([]chatMessage, error) {
	out := make([]chatMessage, 0, len(req.Messages)+1)
	if req.Instructions != "" {
		out = append(out, chatMessage{Role: ctl.instructionsRole, Content: req.Instructions})
	}
	for i, msg := range req.Messages {
		var err error
		switch msg.Role {
		case runlet.RoleUser:
			out, err = chatUserMessageRef(out, msg)
		case runlet.RoleAssistant:
			out, err = chatAssistantMessageRef(out, msg, provider, ctl.sendReasoning)
		case runlet.RoleTool:
			out, err = chatToolMessagesRef(out, msg)
		default:
			err = fmt.Errorf("unknown role %q", msg.Role)
		}
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the request has no messages")
	}
	return out, nil
}

func chatUserMessageRef(out []chatMessage, msg runlet.Message) ([]chatMessage, error) {
	var parts []chatContentPart
	texts := 0
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case runlet.TextPart:
			if p.Text != "" {
				parts = append(parts, chatContentPart{Type: "text", Text: p.Text})
				texts++
			}
		case runlet.ImagePart:
			u, err := chatImage(p)
			if err != nil {
				return nil, err
			}
			parts = append(parts, chatContentPart{Type: "image_url", ImageURL: &chatImageURL{URL: u, Detail: p.Detail}})
		case runlet.FilePart:
			cp, err := chatFilePart(p)
			if err != nil {
				return nil, err
			}
			parts = append(parts, cp)
		case runlet.ToolResultPart:
			// Tool results belong in tool messages wherever they appear.
			out = append(out, chatMessage{Role: "tool", ToolCallID: p.CallID, Content: p.Content})
		case runlet.ReasoningPart, runlet.ToolCallPart:
			return nil, fmt.Errorf("a user message cannot hold a %T", p)
		}
	}
	switch {
	case len(parts) == 0:
		// A message of tool results only needs no user message of its own.
		if len(msg.Parts) == 0 || !chatOnlyToolResults(msg) {
			out = append(out, chatMessage{Role: "user", Content: ""})
		}
	case len(parts) == 1 && texts == 1:
		out = append(out, chatMessage{Role: "user", Content: parts[0].Text})
	default:
		out = append(out, chatMessage{Role: "user", Content: parts})
	}
	return out, nil
}

func chatAssistantMessageRef(out []chatMessage, msg runlet.Message, provider, reasoningField string) ([]chatMessage, error) {
	cm := chatMessage{Role: "assistant"}
	var text, reasoning strings.Builder
	var details []string
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case runlet.TextPart:
			text.WriteString(p.Text)
		case runlet.ReasoningPart:
			// Only this provider's reasoning, and only to servers that want it.
			if reasoningField != "" && p.Provider == provider {
				reasoning.WriteString(p.Text)
			}
			// reasoning_details goes back to the server that sent it
			// whatever SendReasoning says: it asks for it unchanged.
			if p.Provider == provider && strings.HasPrefix(p.Details, "[") && json.Valid([]byte(p.Details)) {
				details = append(details, p.Details)
			}
		case runlet.ToolCallPart:
			args := string(p.Arguments)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			tc := chatToolCall{ID: p.ID, Type: "function", Function: chatFunctionCall{Name: p.Name, Arguments: args}}
			if p.Signature != "" && p.Provider == provider {
				// Sent back unchanged, on the call, only to the server that signed it.
				tc.ExtraContent = &chatExtraContent{}
				tc.ExtraContent.Google.ThoughtSignature = p.Signature
			}
			cm.ToolCalls = append(cm.ToolCalls, tc)
		case runlet.ToolResultPart:
			return nil, fmt.Errorf("an assistant message cannot hold a tool result")
		default:
			return nil, fmt.Errorf("the Chat Completions API takes no %T in an assistant message", p)
		}
	}
	if text.Len() > 0 || len(cm.ToolCalls) == 0 {
		cm.Content = text.String()
	}
	cm.ReasoningDetails = chatJoinDetails(details)
	switch reasoningField {
	case "reasoning_content":
		// DeepSeek's thinking mode answers 400 unless every assistant
		// message with tool calls carries reasoning_content, even empty.
		if r := reasoning.String(); r != "" || len(cm.ToolCalls) > 0 {
			cm.ReasoningContent = &r
		}
	case "reasoning":
		cm.Reasoning = reasoning.String()
	}
	return append(out, cm), nil
}

func chatToolMessagesRef(out []chatMessage, msg runlet.Message) ([]chatMessage, error) {
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case runlet.ToolResultPart:
			out = append(out, chatMessage{Role: "tool", ToolCallID: p.CallID, Content: p.Content})
		default:
			return nil, fmt.Errorf("a tool message can only hold tool results, not a %T", p)
		}
	}
	return out, nil
}

// chatToolChoiceRef is the Chat Completions tool_choice.
func chatToolChoiceRef(tc runlet.ToolChoice) (any, error) {
	return toolChoice(tc, func(name string) any {
		return map[string]any{"type": "function", "function": map[string]string{"name": name}}
	})
}
