package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/dataurl"
)

// chatMessages translates the instructions and history.
func chatMessages(req *runlet.ModelRequest, provider string, ctl *chatControl) ([]chatMessage, error) {
	out := make([]chatMessage, 0, len(req.Messages)+1)
	if req.Instructions != "" {
		out = append(out, chatMessage{Role: ctl.instructionsRole, Content: req.Instructions})
	}
	for i, msg := range req.Messages {
		var err error
		switch msg.Role {
		case runlet.RoleUser:
			out, err = chatUserMessage(out, msg)
		case runlet.RoleAssistant:
			out, err = chatAssistantMessage(out, msg, provider, ctl.sendReasoning)
		case runlet.RoleTool:
			out, err = chatToolMessages(out, msg)
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

func chatUserMessage(out []chatMessage, msg runlet.Message) ([]chatMessage, error) {
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

func chatOnlyToolResults(msg runlet.Message) bool {
	for _, p := range msg.Parts {
		if _, ok := p.(runlet.ToolResultPart); !ok {
			return false
		}
	}
	return true
}

func chatAssistantMessage(out []chatMessage, msg runlet.Message, provider, reasoningField string) ([]chatMessage, error) {
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

// chatJoinDetails returns the one array as it was, or several arrays
// joined into one; nil for none.
func chatJoinDetails(arrays []string) json.RawMessage {
	switch len(arrays) {
	case 0:
		return nil
	case 1:
		return json.RawMessage(arrays[0])
	}
	var b []byte
	for _, a := range arrays {
		inner := bytes.TrimSpace([]byte(a))
		if len(inner) < 2 || inner[0] != '[' {
			continue
		}
		inner = bytes.TrimSpace(inner[1 : len(inner)-1])
		if len(inner) == 0 {
			continue
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, inner...)
	}
	return json.RawMessage("[" + string(b) + "]")
}

func chatToolMessages(out []chatMessage, msg runlet.Message) ([]chatMessage, error) {
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

func chatImage(p runlet.ImagePart) (string, error) {
	if len(p.Data) > 0 {
		return dataurl.Encode(p.MediaType, p.Data), nil
	}
	if p.URL == "" {
		return "", fmt.Errorf("image part has neither URL nor data")
	}
	return p.URL, nil
}

func chatFilePart(p runlet.FilePart) (chatContentPart, error) {
	if mt, d, ok := dataurl.Inline(p.URL, p.MediaType, p.Data); ok {
		p.MediaType, p.Data = mt, d // a data: URL is inline data
	}
	if len(p.Data) == 0 {
		if p.URL != "" {
			return chatContentPart{}, fmt.Errorf("the Chat Completions API takes files as inline data, not by URL (%s)", p.Name)
		}
		return chatContentPart{}, fmt.Errorf("file part %q has no data", p.Name)
	}
	mt := p.MediaType
	if mt == "" {
		mt = http.DetectContentType(p.Data)
	}
	switch strings.ToLower(mt) {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return chatContentPart{Type: "input_audio", InputAudio: &chatInputAudio{Data: base64.StdEncoding.EncodeToString(p.Data), Format: "wav"}}, nil
	case "audio/mpeg", "audio/mp3":
		return chatContentPart{Type: "input_audio", InputAudio: &chatInputAudio{Data: base64.StdEncoding.EncodeToString(p.Data), Format: "mp3"}}, nil
	}
	name := p.Name
	if name == "" {
		name = "file"
	}
	return chatContentPart{Type: "file", File: &chatFile{Filename: name, FileData: dataurl.Encode(mt, p.Data)}}, nil
}
