package runlet

import (
	"encoding/json"
	"fmt"
	"slices"
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
// ToolCallPart, ToolResultPart, ImagePart, FilePart, AudioPart and
// HostedToolPart. In JSON, a Message writes each part with a "type" key:
// "text", "reasoning", "tool_call", "tool_result", "image", "file", "audio"
// or "hosted_tool".
type Part interface {
	partType() string // seals the set; the JSON "type"
}

// TextPart is plain text. ItemID and Provider carry provider continuation
// state: the OpenAI Responses message item ID, which lets a reasoning item
// that preceded the text be sent back with it.
type TextPart struct {
	Text     string `json:"text"`
	ItemID   string `json:"item_id,omitempty"`
	Provider string `json:"provider,omitempty"`
	// Signature is opaque continuation state the provider attached to this
	// text (a Gemini thoughtSignature), sent back only to Provider.
	Signature string `json:"signature,omitempty"`
	// Citations are the sources the model cited for this text, such as
	// the pages a hosted web search found (see Citation).
	Citations []Citation `json:"citations,omitempty"`
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
	// Details is structured reasoning kept as the exact JSON the provider
	// sent (the reasoning_details array of OpenRouter-style Chat
	// Completions servers), sent back unchanged only to Provider.
	Details string `json:"details,omitempty"`
}

// ToolCallPart is the model asking to call a tool. Arguments is the JSON
// object the model produced, exactly as received, unless a person edited
// it (see OriginalArguments).
type ToolCallPart struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// OriginalArguments, when set, are the arguments the model proposed,
	// which a person replaced with Arguments when approving the call
	// (ApproveWithArguments). Arguments are what the tool ran with, and
	// what the history, the session, checkpoints and the next model
	// request show; OriginalArguments are kept for an audit and are never
	// sent to a model (see each provider's documentation).
	OriginalArguments json.RawMessage `json:"original_arguments,omitempty"`
	// ItemID and Provider carry provider continuation state, such as the
	// OpenAI Responses function_call item ID.
	ItemID   string `json:"item_id,omitempty"`
	Provider string `json:"provider,omitempty"`
	// Signature is opaque continuation state the provider attached to the
	// call (a Gemini thoughtSignature, also from Gemini's OpenAI-compatible
	// endpoint), sent back byte-exact only to Provider.
	Signature string `json:"signature,omitempty"`
}

// ToolResultPart is a tool's answer to the call with the same CallID.
//
// Content is always the result's text (its text parts joined, or the
// structured value's JSON when it has no text), so a reader that wants
// text only can ignore the rest. Parts is nil for a text-only result;
// otherwise it holds the whole result in order: TextPart, ImagePart,
// FilePart and AudioPart (see ToolOutput). Structured is the structured
// value the tool returned, when it returned one (a JSON value).
type ToolResultPart struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name,omitempty"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Parts, when set, is the result's content in order (see above).
	Parts []Part `json:"parts,omitempty"`
	// Structured is the tool's structured value, as JSON.
	Structured json.RawMessage `json:"structured,omitempty"`
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

// AudioPart is audio, by URL or inline bytes with a media type
// ("audio/wav", "audio/mpeg", ...).
type AudioPart struct {
	URL       string `json:"url,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Data      []byte `json:"data,omitempty"`
}

func (TextPart) partType() string       { return "text" }
func (ReasoningPart) partType() string  { return "reasoning" }
func (ToolCallPart) partType() string   { return "tool_call" }
func (ToolResultPart) partType() string { return "tool_result" }
func (ImagePart) partType() string      { return "image" }
func (FilePart) partType() string       { return "file" }
func (AudioPart) partType() string      { return "audio" }

// MarshalJSON writes the message with a "type" discriminator in each part.
func (m Message) MarshalJSON() ([]byte, error) {
	role, err := json.Marshal(m.Role)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64*len(m.Parts)+32)
	b = append(b, `{"role":`...)
	b = append(b, role...)
	if m.Parts == nil {
		return append(b, `,"parts":null}`...), nil
	}
	b = append(b, `,"parts":[`...)
	for i, p := range m.Parts {
		if i > 0 {
			b = append(b, ',')
		}
		pb, err := marshalPart(p)
		if err != nil {
			return nil, err
		}
		b = append(b, pb...)
	}
	return append(b, "]}"...), nil
}

// marshalPart writes p with its "type" discriminator.
func marshalPart(p Part) ([]byte, error) {
	switch p := p.(type) {
	case nil:
		return []byte("null"), nil
	case json.Marshaler: // ToolCallPart and ToolResultPart write it themselves
		return p.MarshalJSON()
	default:
		return tagged(p.partType(), p)
	}
}

// MarshalJSON writes the call with its "type" discriminator, as in a
// Message, since a call also stands alone: in ToolStarted, ToolFinished and
// RunInterrupted, Result.Pending, a Checkpoint, the workflow types of
// runlet/temporal and any struct of an application's. Arguments that are
// not valid JSON (a call cut off by the token limit, say) are kept verbatim
// in "arguments_text", so the call still round-trips (encoding/json alone
// would fail on them).
//
// OriginalArguments that are not valid JSON (a person fixed a cut-off
// call) are kept the same way, in "original_arguments_text".
func (p ToolCallPart) MarshalJSON() ([]byte, error) {
	type w ToolCallPart
	if len(p.Arguments) == 0 {
		p.Arguments = json.RawMessage("{}")
	}
	argsOK := json.Valid(p.Arguments)
	origOK := len(p.OriginalArguments) == 0 || json.Valid(p.OriginalArguments)
	if argsOK && origOK {
		return tagged(p.partType(), w(p))
	}
	v := struct {
		w
		Arguments             json.RawMessage `json:"arguments,omitempty"`
		ArgumentsText         *string         `json:"arguments_text,omitempty"`
		OriginalArguments     json.RawMessage `json:"original_arguments,omitempty"`
		OriginalArgumentsText *string         `json:"original_arguments_text,omitempty"`
	}{w: w(p), Arguments: p.Arguments, OriginalArguments: p.OriginalArguments}
	if !argsOK {
		s := string(p.Arguments)
		v.Arguments, v.ArgumentsText = nil, &s
	}
	if !origOK {
		s := string(p.OriginalArguments)
		v.OriginalArguments, v.OriginalArgumentsText = nil, &s
	}
	return tagged(p.partType(), v)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *ToolCallPart) UnmarshalJSON(data []byte) error {
	type w ToolCallPart
	var v struct {
		w
		ArgumentsText         *string `json:"arguments_text"`
		OriginalArgumentsText *string `json:"original_arguments_text"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*p = ToolCallPart(v.w)
	if v.ArgumentsText != nil {
		p.Arguments = json.RawMessage(*v.ArgumentsText)
	}
	if v.OriginalArgumentsText != nil {
		p.OriginalArguments = json.RawMessage(*v.OriginalArgumentsText)
	}
	return nil
}

// clone returns p with its own copies of the argument bytes.
func (p ToolCallPart) clone() ToolCallPart {
	p.Arguments = slices.Clone(p.Arguments)
	p.OriginalArguments = slices.Clone(p.OriginalArguments)
	return p
}

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

// UnmarshalJSON reads what MarshalJSON writes, choosing each part's type by
// its "type" field.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w struct {
		Role  Role       `json:"role"`
		Parts []wirePart `json:"parts"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	m.Role, m.Parts = w.Role, nil
	if w.Parts != nil {
		m.Parts = make([]Part, len(w.Parts))
	}
	for i := range w.Parts {
		p, err := w.Parts[i].part()
		if err != nil {
			return fmt.Errorf("runlet: message part %d: %w", i, err)
		}
		m.Parts[i] = p
	}
	return nil
}

// wirePart holds the JSON fields of every part type; field names shared by
// several types ("id", "name", "text", ...) mean the same thing in each.
type wirePart struct {
	Type          string          `json:"type"`
	Text          string          `json:"text"`
	Signature     string          `json:"signature"`
	Encrypted     string          `json:"encrypted"`
	Details       string          `json:"details"`
	ID            string          `json:"id"`
	Provider      string          `json:"provider"`
	ItemID        string          `json:"item_id"`
	Name          string          `json:"name"`
	Arguments     json.RawMessage `json:"arguments"`
	ArgumentsText *string         `json:"arguments_text"`
	// an edited call's (see ToolCallPart.OriginalArguments)
	OriginalArguments     json.RawMessage `json:"original_arguments"`
	OriginalArgumentsText *string         `json:"original_arguments_text"`
	CallID                string          `json:"call_id"`
	Content               string          `json:"content"`
	IsError               bool            `json:"is_error"`
	URL                   string          `json:"url"`
	MediaType             string          `json:"media_type"`
	Data                  []byte          `json:"data"`
	Detail                string          `json:"detail"`
	// a tool result's parts and structured value
	Parts          []wirePart      `json:"parts"`
	Structured     json.RawMessage `json:"structured"`
	StructuredText *string         `json:"structured_text"`
	// a text's citations, a hosted tool's fields (see hosted.go)
	Citations []Citation      `json:"citations"`
	Kind      HostedToolKind  `json:"kind"`
	Input     json.RawMessage `json:"input"`
	Output    string          `json:"output"`
	Sources   []Citation      `json:"sources"`
	Raw       json.RawMessage `json:"raw"`
}

func (w *wirePart) part() (Part, error) {
	switch w.Type {
	case "text":
		return TextPart{Text: w.Text, ItemID: w.ItemID, Provider: w.Provider, Signature: w.Signature, Citations: w.Citations}, nil
	case "reasoning":
		return ReasoningPart{Text: w.Text, Signature: w.Signature, Encrypted: w.Encrypted, ID: w.ID, Provider: w.Provider, Details: w.Details}, nil
	case "tool_call":
		args := w.Arguments
		if w.ArgumentsText != nil {
			args = json.RawMessage(*w.ArgumentsText)
		}
		orig := w.OriginalArguments
		if w.OriginalArgumentsText != nil {
			orig = json.RawMessage(*w.OriginalArgumentsText)
		}
		return ToolCallPart{ID: w.ID, Name: w.Name, Arguments: args, OriginalArguments: orig,
			ItemID: w.ItemID, Provider: w.Provider, Signature: w.Signature}, nil
	case "tool_result":
		return w.toolResult()
	case "image":
		return ImagePart{URL: w.URL, MediaType: w.MediaType, Data: w.Data, Detail: w.Detail}, nil
	case "file":
		return FilePart{Name: w.Name, URL: w.URL, MediaType: w.MediaType, Data: w.Data}, nil
	case "audio":
		return AudioPart{URL: w.URL, MediaType: w.MediaType, Data: w.Data}, nil
	case "hosted_tool":
		return HostedToolPart{ID: w.ID, Kind: w.Kind, Name: w.Name, Input: w.Input, Output: w.Output,
			Sources: w.Sources, IsError: w.IsError, Provider: w.Provider, Raw: w.Raw}, nil
	}
	return nil, fmt.Errorf("unknown part type %q", w.Type)
}
