package runlet

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Role is who wrote a message.
type Role string

// The roles a message can have. Tool results travel in RoleTool messages;
// instructions travel separately in ModelRequest.Instructions.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation: a role and an ordered list of parts.
// Messages round-trip through JSON losslessly.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// UserText returns a user message holding one text part.
func UserText(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{TextPart{Text: text}}}
}

// AssistantText returns an assistant message holding one text part.
func AssistantText(text string) Message {
	return Message{Role: RoleAssistant, Parts: []Part{TextPart{Text: text}}}
}

// Text returns the concatenated text of the message's text parts.
func (m Message) Text() string {
	var n, count int
	var only string
	for _, p := range m.Parts {
		if t, ok := p.(TextPart); ok {
			n += len(t.Text)
			count++
			only = t.Text
		}
	}
	if count <= 1 {
		return only
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range m.Parts {
		if t, ok := p.(TextPart); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// Reasoning returns the concatenated text of the message's reasoning parts.
func (m Message) Reasoning() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if r, ok := p.(ReasoningPart); ok {
			b.WriteString(r.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the message's tool calls in order.
func (m Message) ToolCalls() []ToolCallPart {
	var calls []ToolCallPart
	for _, p := range m.Parts {
		if c, ok := p.(ToolCallPart); ok {
			calls = append(calls, c)
		}
	}
	return calls
}

// Part is one piece of a message. The set is sealed: TextPart, ReasoningPart,
// ToolCallPart, ToolResultPart, ImagePart and FilePart.
type Part interface {
	// PartType returns the part's JSON discriminator, such as "text".
	PartType() string
	isPart()
}

// TextPart is plain text. ItemID and Provider carry provider continuation
// state: the OpenAI Responses message item ID, which lets a reasoning item
// that preceded the text be sent back with it.
type TextPart struct {
	Text     string `json:"text"`
	ItemID   string `json:"item_id,omitempty"`
	Provider string `json:"provider,omitempty"`
}

// ReasoningPart is the model's reasoning ("thinking"). Besides readable text
// it carries the opaque continuation state a provider needs back on the next
// turn: an Anthropic thinking signature, Anthropic redacted_thinking data or
// OpenAI Responses encrypted_content (Encrypted), and a provider item ID.
//
// Provider names the adapter that produced the state. Adapters send the
// state back only to the same provider and drop foreign state, so a run that
// switches models never sends another vendor's signatures.
type ReasoningPart struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Encrypted string `json:"encrypted,omitempty"`
	ID        string `json:"id,omitempty"`
	Provider  string `json:"provider,omitempty"`
}

// ToolCallPart is the model asking to call a tool. Arguments is the JSON
// object the model produced, exactly as received.
type ToolCallPart struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// ItemID and Provider carry provider continuation state, such as the
	// OpenAI Responses function_call item ID.
	ItemID   string `json:"item_id,omitempty"`
	Provider string `json:"provider,omitempty"`
}

// ToolResultPart is a tool's answer to the call with the same CallID.
type ToolResultPart struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name,omitempty"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// ImagePart is an image, either by URL or inline bytes with a media type.
type ImagePart struct {
	URL       string `json:"url,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Data      []byte `json:"data,omitempty"`
	// Detail is a fidelity hint ("low", "high", "auto") for providers that take one.
	Detail string `json:"detail,omitempty"`
}

// FilePart is a document (PDF, text, ...), by URL or inline bytes.
type FilePart struct {
	Name      string `json:"name,omitempty"`
	URL       string `json:"url,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Data      []byte `json:"data,omitempty"`
}

func (TextPart) PartType() string       { return "text" }
func (ReasoningPart) PartType() string  { return "reasoning" }
func (ToolCallPart) PartType() string   { return "tool_call" }
func (ToolResultPart) PartType() string { return "tool_result" }
func (ImagePart) PartType() string      { return "image" }
func (FilePart) PartType() string       { return "file" }

func (TextPart) isPart()       {}
func (ReasoningPart) isPart()  {}
func (ToolCallPart) isPart()   {}
func (ToolResultPart) isPart() {}
func (ImagePart) isPart()      {}
func (FilePart) isPart()       {}

// MarshalJSON writes the part with its "type" discriminator.
func (p TextPart) MarshalJSON() ([]byte, error) { type w TextPart; return tagged(p.PartType(), w(p)) }

// MarshalJSON writes the part with its "type" discriminator.
func (p ReasoningPart) MarshalJSON() ([]byte, error) {
	type w ReasoningPart
	return tagged(p.PartType(), w(p))
}

// MarshalJSON writes the part with its "type" discriminator. Arguments that
// are not valid JSON (a call cut off by the token limit, say) are kept
// verbatim in "arguments_text", so the part still round-trips.
func (p ToolCallPart) MarshalJSON() ([]byte, error) {
	type w ToolCallPart
	if len(p.Arguments) == 0 {
		p.Arguments = json.RawMessage("{}")
	}
	if !json.Valid(p.Arguments) {
		return tagged(p.PartType(), struct {
			w
			Arguments     json.RawMessage `json:"arguments,omitempty"`
			ArgumentsText string          `json:"arguments_text"`
		}{w: w(p), ArgumentsText: string(p.Arguments)})
	}
	return tagged(p.PartType(), w(p))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *ToolCallPart) UnmarshalJSON(data []byte) error {
	type w ToolCallPart
	var v struct {
		w
		ArgumentsText *string `json:"arguments_text"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*p = ToolCallPart(v.w)
	if v.ArgumentsText != nil {
		p.Arguments = json.RawMessage(*v.ArgumentsText)
	}
	return nil
}

// MarshalJSON writes the part with its "type" discriminator.
func (p ToolResultPart) MarshalJSON() ([]byte, error) {
	type w ToolResultPart
	return tagged(p.PartType(), w(p))
}

// MarshalJSON writes the part with its "type" discriminator.
func (p ImagePart) MarshalJSON() ([]byte, error) { type w ImagePart; return tagged(p.PartType(), w(p)) }

// MarshalJSON writes the part with its "type" discriminator.
func (p FilePart) MarshalJSON() ([]byte, error) { type w FilePart; return tagged(p.PartType(), w(p)) }

// tagged marshals v (a struct without MarshalJSON) and prepends "type":typ.
func tagged(typ string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(typ)+12)
	out = append(out, `{"type":"`...)
	out = append(out, typ...)
	out = append(out, '"')
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// UnmarshalJSON decodes a message, choosing each part's type by its "type" field.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w struct {
		Role  Role              `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	m.Role = w.Role
	m.Parts = make([]Part, 0, len(w.Parts))
	for i, raw := range w.Parts {
		p, err := UnmarshalPart(raw)
		if err != nil {
			return fmt.Errorf("runlet: message part %d: %w", i, err)
		}
		m.Parts = append(m.Parts, p)
	}
	return nil
}

// UnmarshalPart decodes one JSON part written by a Part's MarshalJSON.
func UnmarshalPart(data []byte) (Part, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	switch head.Type {
	case "text":
		return decodePart[TextPart](data)
	case "reasoning":
		return decodePart[ReasoningPart](data)
	case "tool_call":
		return decodePart[ToolCallPart](data)
	case "tool_result":
		return decodePart[ToolResultPart](data)
	case "image":
		return decodePart[ImagePart](data)
	case "file":
		return decodePart[FilePart](data)
	}
	return nil, fmt.Errorf("unknown part type %q", head.Type)
}

func decodePart[T Part](data []byte) (Part, error) {
	var p T
	err := json.Unmarshal(data, &p)
	return p, err
}
