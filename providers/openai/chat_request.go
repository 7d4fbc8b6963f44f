package openai

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
)

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

// emptyParams is the parameters schema of a tool that declares none.
var emptyParams = json.RawMessage(`{"type":"object","properties":{}}`)

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
	webSearch        json.RawMessage   // web_search_options, from a hosted web search
	hostedDecls      []json.RawMessage // pass-through tool declarations
}

// buildRequest encodes req; a request it cannot build is a
// *runlet.ProviderError wrapping runlet.ErrInvalidRequest.
func (m *ChatCompletions) buildRequest(req *runlet.ModelRequest, stream bool) (chatBuilt, error) {
	if m.r.err != nil {
		return chatBuilt{}, m.r.err
	}
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
	var err error
	if ctl.webSearch, ctl.hostedDecls, err = chatHostedTools(req.HostedTools, m.r.name); err != nil {
		return chatBuilt{}, err
	}
	body, err := chatWrite(req, m.r.name, &ctl, stream, extra)
	if err != nil {
		return chatBuilt{}, err
	}
	return chatBuilt{body: body, thinkTags: ctl.thinkTags, model: ctl.model}, nil
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
