package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/runlet/runlet"
)

// Wire types of a Responses response: the response object (the body of a
// non-streamed call, and the "response" of created/completed/... events)
// and its output items. Only what the adapter reads is modelled.
type respResponse struct {
	ID                string            `json:"id"`
	Model             string            `json:"model"`
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	Usage             *respUsage        `json:"usage"`
	IncompleteDetails *respIncomplete   `json:"incomplete_details"`
	Error             *respErrorBody    `json:"error"`
}

type respIncomplete struct {
	Reason string `json:"reason"`
}

type respUsage struct {
	InputTokens         int           `json:"input_tokens"`
	OutputTokens        int           `json:"output_tokens"`
	TotalTokens         int           `json:"total_tokens"`
	InputTokensDetails  inputDetails  `json:"input_tokens_details"`
	OutputTokensDetails outputDetails `json:"output_tokens_details"`
}

// respErrorBody is the error of a failed response or of an "error" event.
type respErrorBody struct {
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

// respOutItem is one output item. Fields are set according to Type.
type respOutItem struct {
	Type             string        `json:"type"`
	ID               string        `json:"id"`
	Content          []respOutPart `json:"content"`           // message, reasoning (raw text)
	Summary          []respOutPart `json:"summary"`           // reasoning
	EncryptedContent string        `json:"encrypted_content"` // reasoning
	CallID           string        `json:"call_id"`           // function_call
	Name             string        `json:"name"`              // function_call
	Arguments        string        `json:"arguments"`         // function_call
	// Raw is a hosted tool's item as received (see responses_hosted.go).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the item and keeps a hosted tool's item whole.
func (it *respOutItem) UnmarshalJSON(data []byte) error {
	type plain respOutItem
	it.Raw = nil
	err := json.Unmarshal(data, (*plain)(it))
	if respHostedItem(it.Type) {
		it.Raw = append(json.RawMessage(nil), bytes.TrimSpace(data)...)
	}
	return err
}

type respOutPart struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
	// Annotations of output_text: citations (see respCitations).
	Annotations []json.RawMessage `json:"annotations"`
}

// Output item types the adapter translates.
const (
	respItemMessage      = "message"
	respItemFunctionCall = "function_call"
	respItemReasoning    = "reasoning"
)

// respDecodeItem decodes an output item. Items of types the adapter does not
// translate may have any shape; they decode to their type alone.
func respDecodeItem(raw []byte, it *respOutItem) error {
	*it = respOutItem{}
	err := json.Unmarshal(raw, it)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		switch it.Type {
		case respItemMessage, respItemFunctionCall, respItemReasoning:
		default:
			*it = respOutItem{Type: it.Type, ID: it.ID, Raw: it.Raw}
			if it.Type == "" {
				it.Type = "unknown"
			}
			return nil
		}
	}
	return err
}

// respFinalText returns what an item contributes to its part: the message
// text (refusals included), the call arguments, or the reasoning text
// (summary parts joined by a blank line, else the raw reasoning text).
func respFinalText(it *respOutItem) (text string, refusal bool) {
	switch it.Type {
	case respItemMessage:
		if len(it.Content) == 1 {
			c := &it.Content[0]
			return c.Text + c.Refusal, c.Type == "refusal"
		}
		var b strings.Builder
		for i := range it.Content {
			c := &it.Content[i]
			b.WriteString(c.Text)
			b.WriteString(c.Refusal)
			refusal = refusal || c.Type == "refusal"
		}
		return b.String(), refusal
	case respItemFunctionCall:
		return it.Arguments, false
	case respItemReasoning:
		parts := it.Summary
		if len(parts) == 0 {
			parts = it.Content
		}
		if len(parts) == 1 {
			return parts[0].Text, false
		}
		var b strings.Builder
		for i := range parts {
			if i > 0 {
				b.WriteString(respReasoningSep)
			}
			b.WriteString(parts[i].Text)
		}
		return b.String(), false
	}
	return "", false
}

// respReasoningSep separates the summary parts of one reasoning item.
const respReasoningSep = "\n\n"

// respItem is the state of one output item while it is assembled.
type respItem struct {
	index     int    // output_index
	typ       string // output item type
	id        string
	text      respText // message text, call arguments or reasoning text, as emitted
	sub       int      // summary or content index of the last reasoning delta
	callID    string
	name      string
	call      int  // tool-call index within the response
	announced bool // a tool-call delta with ID and name was emitted
	encrypted string
	refusal   bool
	done      bool              // the final item was seen; text is final
	raw       json.RawMessage   // a hosted tool's item
	citations []runlet.Citation // a message's annotations
}

// respText is a strings.Builder that can also hold a whole string without
// copying it: the final text of an item, which usually is all of it.
type respText struct {
	b     strings.Builder
	s     string
	whole bool // s is the text
}

// set makes s the text.
func (t *respText) set(s string) {
	t.b.Reset()
	t.s, t.whole = s, true
}

func (t *respText) WriteString(s string) {
	if t.whole {
		t.b.WriteString(t.s)
		t.s, t.whole = "", false
	}
	t.b.WriteString(s)
}

func (t *respText) Len() int {
	if t.whole {
		return len(t.s)
	}
	return t.b.Len()
}

func (t *respText) String() string {
	if t.whole {
		return t.s
	}
	return t.b.String()
}

// respAssembler builds a ModelResponse from output items, complete ones
// (non-streamed responses) or streamed ones, and collects the stream events
// the streamed ones produce.
type respAssembler struct {
	provider string
	items    []*respItem
	byIndex  map[int]*respItem // output index -> item, once there are many
	last     *respItem         // the item the last delta went to
	calls    int
	events   []runlet.StreamEvent
	quiet    bool        // collect no stream events (non-streamed response)
	item     respOutItem // scratch
}

// find returns the item with the output index, or nil.
func (a *respAssembler) find(index int) *respItem {
	if a.last != nil && a.last.index == index {
		return a.last
	}
	if a.byIndex != nil {
		if it := a.byIndex[index]; it != nil {
			a.last = it
			return it
		}
		return nil
	}
	for _, it := range a.items {
		if it.index == index {
			a.last = it
			return it
		}
	}
	return nil
}

// respIndexAt is the item count from which items are found through a map.
const respIndexAt = 8

// get returns the item with the output index, creating one of type typ.
func (a *respAssembler) get(index int, typ string) *respItem {
	if it := a.find(index); it != nil {
		return it
	}
	it := &respItem{index: index, typ: typ, sub: -1}
	if typ == respItemFunctionCall {
		it.call = a.calls
		a.calls++
	}
	a.items = append(a.items, it)
	a.last = it
	switch {
	case a.byIndex != nil:
		a.byIndex[index] = it
	case len(a.items) > respIndexAt:
		a.byIndex = make(map[int]*respItem, 2*len(a.items))
		for _, it := range a.items {
			a.byIndex[it.index] = it
		}
	}
	return it
}

func (a *respAssembler) emit(ev runlet.StreamEvent) {
	if !a.quiet {
		a.events = append(a.events, ev)
	}
}

// added handles response.output_item.added.
func (a *respAssembler) added(index int, w *respOutItem) {
	switch w.Type {
	case respItemMessage, respItemFunctionCall, respItemReasoning:
	default:
		return
	}
	it := a.get(index, w.Type)
	if it.typ != w.Type {
		return
	}
	if w.ID != "" {
		it.id = w.ID
	}
	switch w.Type {
	case respItemFunctionCall:
		it.callID, it.name = w.CallID, w.Name
		it.text.WriteString(w.Arguments)
		it.announced = true
		a.emit(runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: it.call, ID: w.CallID, Name: w.Name, Delta: w.Arguments})
	case respItemReasoning:
		it.encrypted = w.EncryptedContent // may be incomplete; replaced when done
	}
}

// delta handles a text, refusal, arguments or reasoning delta.
func (a *respAssembler) delta(index int, typ string, sub int, delta string, refusal bool) {
	it := a.get(index, typ)
	if it.typ != typ || it.done || delta == "" {
		return
	}
	switch typ {
	case respItemMessage:
		it.text.WriteString(delta)
		it.refusal = it.refusal || refusal
		a.emit(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: delta})
	case respItemFunctionCall:
		it.text.WriteString(delta)
		ev := runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: it.call, Delta: delta}
		if !it.announced && it.callID != "" {
			ev.ID, ev.Name, it.announced = it.callID, it.name, true
		}
		a.emit(ev)
	case respItemReasoning:
		if sub != it.sub && it.text.Len() > 0 {
			delta = respReasoningSep + delta
		}
		it.sub = sub
		it.text.WriteString(delta)
		a.emit(runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: delta})
	}
}

// addFinal handles a complete output item: response.output_item.done, an
// item of the final response the stream did not show, or an item of a
// non-streamed response. What the stream has not yet shown of it is emitted.
func (a *respAssembler) addFinal(index int, w *respOutItem) {
	switch w.Type {
	case respItemMessage, respItemFunctionCall, respItemReasoning:
	default:
		if respHostedItem(w.Type) && len(w.Raw) > 0 {
			if it := a.get(index, w.Type); it.typ == w.Type && !it.done {
				it.done, it.id, it.raw = true, w.ID, w.Raw
			}
		}
		return
	}
	it := a.get(index, w.Type)
	if it.typ != w.Type || it.done {
		return
	}
	it.done = true
	if w.ID != "" {
		it.id = w.ID
	}
	final, refusal := respFinalText(w)
	it.refusal = it.refusal || refusal
	if w.Type == respItemFunctionCall {
		if w.CallID != "" {
			it.callID = w.CallID
		}
		if w.Name != "" {
			it.name = w.Name
		}
	}
	if w.Type == respItemReasoning {
		it.encrypted = w.EncryptedContent
	}
	if w.Type == respItemMessage {
		it.citations = respCitations(a.provider, w.Content)
	}
	cur := it.text.String()
	var rest string
	if final != cur {
		if strings.HasPrefix(final, cur) {
			rest = final[len(cur):]
		}
		it.text.set(final)
	}
	switch w.Type {
	case respItemMessage:
		if rest != "" {
			a.emit(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: rest})
		}
	case respItemReasoning:
		if rest != "" {
			a.emit(runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: rest})
		}
	case respItemFunctionCall:
		if rest != "" || !it.announced {
			ev := runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: it.call, Delta: rest}
			if !it.announced {
				ev.ID, ev.Name, it.announced = it.callID, it.name, true
			}
			a.emit(ev)
		}
	}
}

// finish adds the items of the final response the stream left incomplete
// or did not show (matched by output index).
func (a *respAssembler) finish(w *respResponse) error {
	for i, raw := range w.Output {
		if it := a.find(i); it != nil && it.done {
			continue
		}
		if err := respDecodeItem(raw, &a.item); err != nil {
			return err
		}
		a.addFinal(i, &a.item)
	}
	return nil
}

// response assembles the ModelResponse.
func (a *respAssembler) response(w *respResponse) *runlet.ModelResponse {
	slices.SortStableFunc(a.items, func(x, y *respItem) int { return x.index - y.index })
	msg := runlet.Message{Role: runlet.RoleAssistant, Parts: make([]runlet.Part, 0, len(a.items))}
	calls, refusal, searches := false, false, 0
	for _, it := range a.items {
		switch it.typ {
		case respItemMessage:
			if it.text.Len() > 0 {
				msg.Parts = append(msg.Parts, runlet.TextPart{Text: it.text.String(), ItemID: it.id, Provider: a.provider, Citations: it.citations})
			}
			refusal = refusal || it.refusal
		case respItemFunctionCall:
			args := it.text.String()
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			msg.Parts = append(msg.Parts, runlet.ToolCallPart{
				ID: it.callID, Name: it.name, Arguments: json.RawMessage(args),
				ItemID: it.id, Provider: a.provider,
			})
			calls = true
		case respItemReasoning:
			if it.text.Len() == 0 && it.encrypted == "" && it.id == "" {
				continue
			}
			msg.Parts = append(msg.Parts, runlet.ReasoningPart{
				Text: it.text.String(), Encrypted: it.encrypted, ID: it.id, Provider: a.provider,
			})
		default:
			if len(it.raw) > 0 {
				msg.Parts = append(msg.Parts, respHostedPart(a.provider, it.raw))
				if it.typ == "web_search_call" {
					searches++
				}
			}
		}
	}
	out := &runlet.ModelResponse{Message: msg, ID: w.ID, Model: w.Model}
	if u := w.Usage; u != nil {
		out.Usage = runlet.Usage{
			InputTokens:       u.InputTokens,
			OutputTokens:      u.OutputTokens,
			TotalTokens:       u.TotalTokens,
			ReasoningTokens:   u.OutputTokensDetails.ReasoningTokens,
			CachedInputTokens: u.InputTokensDetails.CachedTokens,
			CacheWriteTokens:  u.InputTokensDetails.CacheWriteTokens,
		}
		if out.Usage.TotalTokens == 0 {
			out.Usage.TotalTokens = u.InputTokens + u.OutputTokens
		}
	}
	out.Usage.Requests = 1
	out.Usage.WebSearchRequests = searches
	switch {
	case w.Status == "incomplete":
		out.FinishReason = runlet.FinishOther
		if d := w.IncompleteDetails; d != nil {
			switch d.Reason {
			case "max_output_tokens":
				out.FinishReason = runlet.FinishLength
			case "content_filter":
				out.FinishReason = runlet.FinishContentFilter
			}
		}
	case w.Status != "" && w.Status != "completed":
		out.FinishReason = runlet.FinishOther // cancelled, or a background response
	case calls:
		out.FinishReason = runlet.FinishToolCalls
	case refusal:
		out.FinishReason = runlet.FinishRefusal
	default:
		out.FinishReason = runlet.FinishStop
	}
	return out
}
