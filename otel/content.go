package otel

import (
	"encoding/json"
	"strings"

	"github.com/runlet/runlet"
)

// The JSON shapes of gen_ai.input.messages, gen_ai.output.messages and
// gen_ai.system_instructions in the GenAI semantic conventions. Only used
// with content recording on.

type semMessage struct {
	Role         string    `json:"role"`
	Parts        []semPart `json:"parts"`
	FinishReason string    `json:"finish_reason,omitempty"`
}

type semPart struct {
	Type      string `json:"type"`
	Content   string `json:"content,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
	Response  any    `json:"response,omitempty"`
	Modality  string `json:"modality,omitempty"`
	MIMEType  string `json:"mime_type,omitempty"`
	URI       string `json:"uri,omitempty"`
}

// messagesJSON encodes msgs; finish, if set, is every message's finish reason.
func messagesJSON(msgs []runlet.Message, finish string) string {
	out := make([]semMessage, len(msgs))
	for i, m := range msgs {
		out[i] = semMessage{Role: string(m.Role), Parts: parts(m.Parts), FinishReason: finish}
	}
	return marshal(out)
}

// outputJSON encodes the model's answer as gen_ai.output.messages.
func outputJSON(m runlet.Message, finish string) string {
	if m.Role == "" {
		m.Role = runlet.RoleAssistant
	}
	return messagesJSON([]runlet.Message{m}, finish)
}

// instructionsJSON encodes the system prompt as gen_ai.system_instructions.
func instructionsJSON(s string) string {
	if s == "" {
		return "[]"
	}
	return marshal([]semPart{{Type: "text", Content: s}})
}

// parts converts message parts. Opaque provider state (reasoning signatures,
// encrypted reasoning) and inline file bytes are left out.
func parts(ps []runlet.Part) []semPart {
	out := make([]semPart, 0, len(ps))
	for _, p := range ps {
		switch p := p.(type) {
		case runlet.TextPart:
			out = append(out, semPart{Type: "text", Content: p.Text})
		case runlet.ReasoningPart:
			if p.Text != "" {
				out = append(out, semPart{Type: "reasoning", Content: p.Text})
			}
		case runlet.ToolCallPart:
			out = append(out, semPart{Type: "tool_call", ID: p.ID, Name: p.Name, Arguments: rawOrString(p.Arguments)})
		case runlet.ToolResultPart:
			out = append(out, semPart{Type: "tool_call_response", ID: p.CallID, Response: p.Content})
		case runlet.ImagePart:
			out = append(out, media("image", p.MediaType, p.URL))
		case runlet.FilePart:
			out = append(out, media(modality(p.MediaType), p.MediaType, p.URL))
		case runlet.AudioPart:
			out = append(out, media("audio", p.MediaType, p.URL))
		}
	}
	return out
}

func media(modality, mimeType, uri string) semPart {
	if uri != "" && !strings.HasPrefix(uri, "data:") {
		return semPart{Type: "uri", Modality: modality, MIMEType: mimeType, URI: uri}
	}
	return semPart{Type: "blob", Modality: modality, MIMEType: mimeType}
}

func modality(mimeType string) string {
	for _, m := range []string{"image", "video", "audio"} {
		if strings.HasPrefix(mimeType, m+"/") {
			return m
		}
	}
	return "document"
}

// rawOrString returns valid JSON as is, anything else as a string.
func rawOrString(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return b
	}
	return string(b)
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
