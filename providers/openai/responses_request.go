package openai

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/dataurl"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/wirejson"
)

// Wire types of a Responses request body. Only what the adapter writes is
// modelled; everything else reaches the body through ModelRequest.Options.
type respRequest struct {
	Model              string         `json:"model"`
	Instructions       string         `json:"instructions,omitempty"`
	PreviousResponseID string         `json:"previous_response_id,omitempty"`
	Input              []any          `json:"input"`
	Tools              []any          `json:"tools,omitempty"` // respTool, then built-in tools from the "tools" option
	ToolChoice         any            `json:"tool_choice,omitempty"`
	Text               map[string]any `json:"text,omitempty"`
	MaxOutputTokens    int            `json:"max_output_tokens,omitempty"`
	Temperature        *float64       `json:"temperature,omitempty"`
	TopP               *float64       `json:"top_p,omitempty"`
	Store              bool           `json:"store"`
	Include            []string       `json:"include,omitempty"`
	Stream             bool           `json:"stream,omitempty"`
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
	Output string `json:"output"`
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

var respEmptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

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
}

// buildRequest translates a runlet request into a Responses API body.
func (m *Responses) buildRequest(req *runlet.ModelRequest, stream bool) (respBuilt, error) {
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

	// Conversation state: stateless (full history) unless chaining.
	msgs := req.Messages
	auto := prevID == respChainAuto
	if auto {
		prevID = ""
		if id, n, ok := m.chain.lookup(m.r.name, msgs); ok {
			prevID, msgs = id, msgs[n:]
		}
	} else if prevID != "" {
		msgs = msgs[respAfterLastAssistant(msgs):]
	}
	w.PreviousResponseID = prevID
	if !storeSet {
		store = prevID != "" || auto
	}
	w.Store = store
	if !store && reasoning && !slices.Contains(w.Include, respIncludeEncrypted) {
		w.Include = append(w.Include, respIncludeEncrypted)
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
			tool := respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: respEmptySchema, Strict: strict}
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
	return respBuilt{body: body, store: store, auto: auto}, nil
}

func (m *Responses) invalid(msg string, err error) *runlet.ProviderError {
	return httpc.RequestError(m.r.name, msg, err)
}

// respAfterLastAssistant returns the index of the first message after the
// last assistant message (0 when there is none).
func respAfterLastAssistant(msgs []runlet.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == runlet.RoleAssistant {
			return i + 1
		}
	}
	return 0
}

// translateMessages converts runlet messages to input items, in order.
// store says whether OpenAI keeps items, so reasoning can be referenced by ID
// alone.
func (m *Responses) translateMessages(msgs []runlet.Message, store bool) ([]any, error) {
	items := make([]any, 0, len(msgs)+2)
	for i, msg := range msgs {
		var err error
		if msg.Role == runlet.RoleAssistant {
			items, err = m.appendAssistant(items, msg, store)
		} else {
			items, err = m.appendInput(items, msg)
		}
		if err != nil {
			return nil, m.invalid(fmt.Sprintf("message %d", i), err)
		}
	}
	return items, nil
}

// appendInput translates a user or tool message: text, images and files
// become one input message (a plain string when it is only text), tool
// results become function_call_output items.
func (m *Responses) appendInput(items []any, msg runlet.Message) ([]any, error) {
	role := "user"
	if msg.Role != runlet.RoleUser && msg.Role != runlet.RoleTool {
		role = string(msg.Role) // "system", "developer": passed as given
	}
	var content []any
	flush := func() {
		if len(content) == 0 {
			return
		}
		var c any = content
		if len(content) == 1 {
			if t, ok := content[0].(respInputText); ok {
				c = t.Text
			}
		}
		items = append(items, respMessage{Type: "message", Role: role, Content: c})
		content = nil
	}
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case runlet.TextPart:
			content = append(content, respInputText{Type: "input_text", Text: p.Text})
		case runlet.ImagePart:
			u := p.URL
			if len(p.Data) > 0 {
				u = dataurl.Encode(p.MediaType, p.Data)
			}
			if u == "" {
				return nil, fmt.Errorf("image part has neither URL nor data")
			}
			detail := p.Detail
			if detail == "" {
				detail = "auto"
			}
			content = append(content, respInputImage{Type: "input_image", ImageURL: u, Detail: detail})
		case runlet.FilePart:
			f := respInputFile{Type: "input_file", Filename: p.Name}
			if mt, d, ok := dataurl.Inline(p.URL, p.MediaType, p.Data); ok {
				p.MediaType, p.Data = mt, d // a data: URL goes as file_data, not file_url
			}
			switch {
			case len(p.Data) > 0:
				f.FileData = dataurl.Encode(p.MediaType, p.Data)
				if f.Filename == "" {
					f.Filename = "file"
				}
			case p.URL != "":
				f.FileURL = p.URL
			default:
				return nil, fmt.Errorf("file part has neither URL nor data")
			}
			content = append(content, f)
		case runlet.ToolResultPart:
			flush()
			if p.CallID == "" {
				return nil, fmt.Errorf("tool result has no call ID")
			}
			items = append(items, respFunctionCallOutput{Type: "function_call_output", CallID: p.CallID, Output: p.Content})
		}
		// Reasoning and tool calls outside assistant messages have no input form.
	}
	flush()
	return items, nil
}

// appendAssistant translates an assistant message: text as assistant input
// messages, tool calls as function_call items, and reasoning items this
// provider produced when they can be replayed (see the Responses doc).
func (m *Responses) appendAssistant(items []any, msg runlet.Message, store bool) ([]any, error) {
	parts := msg.Parts
	// keep[i]: reasoning part i is sent. A reasoning item is valid input only
	// with the item that followed it, so decide from the back.
	var keep []bool
	for i := len(parts) - 1; i >= 0; i-- {
		r, ok := parts[i].(runlet.ReasoningPart)
		if !ok || r.Provider != m.r.name || r.ID == "" || (r.Encrypted == "" && !store) || i+1 == len(parts) {
			continue
		}
		next := false
		switch n := parts[i+1].(type) {
		case runlet.ToolCallPart:
			next = n.Provider == m.r.name && n.ItemID != ""
		case runlet.TextPart:
			next = n.Provider == m.r.name && n.ItemID != ""
		case runlet.ReasoningPart:
			next = keep != nil && keep[i+1]
		}
		if next {
			if keep == nil {
				keep = make([]bool, len(parts))
			}
			keep[i] = true
		}
	}

	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			items = append(items, respMessage{Type: "message", Role: "assistant", Content: text.String()})
			text.Reset()
		}
	}
	paired := false // the nearest reasoning part before this point was sent
	for i, p := range parts {
		switch p := p.(type) {
		case runlet.TextPart:
			if paired && p.Provider == m.r.name && p.ItemID != "" {
				// The message that followed a replayed reasoning item goes
				// back as that output item, with its ID, so they pair.
				flush()
				items = append(items, respOutputMessage{Type: "message", Role: "assistant", ID: p.ItemID, Status: "completed",
					Content: []respOutputText{{Type: "output_text", Text: p.Text, Annotations: []any{}, Logprobs: []any{}}}})
				paired = false
				continue
			}
			text.WriteString(p.Text)
		case runlet.ReasoningPart:
			if p.Provider != m.r.name {
				continue // foreign continuation state: never sent
			}
			paired = keep != nil && keep[i]
			if !paired {
				continue
			}
			flush()
			r := respReasoning{Type: "reasoning", ID: p.ID, Summary: []respInputText{}, EncryptedContent: p.Encrypted}
			if p.Text != "" {
				r.Summary = append(r.Summary, respInputText{Type: "summary_text", Text: p.Text})
			}
			items = append(items, r)
		case runlet.ToolCallPart:
			flush()
			if p.ID == "" || p.Name == "" {
				return nil, fmt.Errorf("tool call without ID or name")
			}
			fc := respFunctionCall{Type: "function_call", CallID: p.ID, Name: p.Name, Arguments: string(p.Arguments)}
			if fc.Arguments == "" {
				fc.Arguments = "{}"
			}
			if paired && p.Provider == m.r.name {
				fc.ID = p.ItemID
			}
			items = append(items, fc)
		}
	}
	flush()
	return items, nil
}

func respToolChoice(tc runlet.ToolChoice) (any, error) {
	switch tc.Mode {
	case "":
		return nil, nil
	case runlet.ToolChoiceAuto, runlet.ToolChoiceNone, runlet.ToolChoiceRequired:
		return string(tc.Mode), nil
	case runlet.ToolChoiceTool:
		if tc.Name == "" {
			return nil, fmt.Errorf("mode %q needs a tool name", tc.Mode)
		}
		return map[string]string{"type": "function", "name": tc.Name}, nil
	}
	return nil, fmt.Errorf("unknown mode %q", tc.Mode)
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

// respChain remembers which response produced which function call and
// reasoning item, for previous_response_id "auto". It is bounded: the
// oldest entries are forgotten first.
type respChain struct {
	mu    sync.Mutex
	ids   map[string]string // item ID -> response ID
	order []string          // ring of item IDs, oldest at next
	next  int
}

const respChainMax = 4096

// record notes the items of a response.
func (c *respChain) record(responseID string, msg runlet.Message) {
	if responseID == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range msg.Parts {
		var key string
		switch p := p.(type) {
		case runlet.ToolCallPart:
			key = p.Provider + "\x00" + p.ItemID
			if p.ItemID == "" {
				continue
			}
		case runlet.ReasoningPart:
			key = p.Provider + "\x00" + p.ID
			if p.ID == "" {
				continue
			}
		default:
			continue
		}
		if c.ids == nil {
			c.ids = make(map[string]string)
		}
		if _, ok := c.ids[key]; !ok {
			if len(c.order) < respChainMax {
				c.order = append(c.order, key)
			} else {
				delete(c.ids, c.order[c.next])
				c.order[c.next] = key
				c.next = (c.next + 1) % respChainMax
			}
		}
		c.ids[key] = responseID
	}
}

// lookup finds the response that produced the last assistant message and
// returns its ID and the index of the first message after that message.
func (c *respChain) lookup(provider string, msgs []runlet.Message) (string, int, bool) {
	n := respAfterLastAssistant(msgs)
	if n == 0 {
		return "", 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range msgs[n-1].Parts {
		var key string
		switch p := p.(type) {
		case runlet.ToolCallPart:
			key = p.Provider + "\x00" + p.ItemID
		case runlet.ReasoningPart:
			key = p.Provider + "\x00" + p.ID
		default:
			continue
		}
		if !strings.HasPrefix(key, provider+"\x00") {
			continue
		}
		if id, ok := c.ids[key]; ok {
			return id, n, true
		}
	}
	return "", 0, false
}

// remember records a response for automatic chaining when it was stored.
func (m *Responses) remember(b respBuilt, resp *runlet.ModelResponse) {
	if b.auto && b.store && resp != nil {
		m.chain.record(resp.ID, resp.Message)
	}
}
