package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/sse"
	"github.com/runlet/runlet/modelkit"
)

// chatChunk is one chat.completion.chunk. The decoder reuses one value for
// the whole stream, so it must be reset before every decode (encoding/json
// leaves absent fields, and reused slice elements, as they were).
type chatChunk struct {
	Choices []chatChunkChoice `json:"choices"`
	Usage   *chatUsage        `json:"usage"`
	Error   json.RawMessage   `json:"error"`
}

// chatChunkHead also decodes the chunk's id and model. The decoder uses it
// only until it has them, so later chunks do not allocate those strings.
type chatChunkHead struct {
	ID    string `json:"id"`
	Model string `json:"model"`
	*chatChunk
}

type chatChunkChoice struct {
	Index        int       `json:"index"`
	Delta        chatDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

type chatDelta struct {
	chatTexts
	ReasoningDetails json.RawMessage     `json:"reasoning_details"`
	Annotations      json.RawMessage     `json:"annotations"` // OpenRouter streams them
	ToolCalls        []chatToolCallDelta `json:"tool_calls"`
}

type chatToolCallDelta struct {
	Index        chatOptInt        `json:"index"`
	ID           string            `json:"id"`
	Function     chatCallFunc      `json:"function"`
	ExtraContent *chatExtraContent `json:"extra_content"`
}

func (c *chatChunk) reset() {
	all := c.Choices[:cap(c.Choices)]
	for i := range all {
		ch := &all[i]
		ch.Index, ch.FinishReason = 0, ""
		d := &ch.Delta
		d.Content.reset()
		d.Refusal.reset()
		d.ReasoningContent.reset()
		d.Reasoning.reset()
		d.ReasoningDetails = d.ReasoningDetails[:0]
		d.Annotations = d.Annotations[:0]
		calls := d.ToolCalls[:cap(d.ToolCalls)]
		for j := range calls {
			tc := &calls[j]
			tc.Index, tc.ID, tc.Function.Name, tc.ExtraContent = chatOptInt{}, "", "", nil
			tc.Function.Arguments.reset()
		}
		d.ToolCalls = d.ToolCalls[:0]
	}
	c.Choices = c.Choices[:0]
	c.Usage = nil
	c.Error = c.Error[:0]
}

// chatJSON decodes the chunks of one stream, one JSON value each, with a
// json.Decoder that lives as long as the stream. Unlike json.Unmarshal it
// keeps its scanner and decoding state from chunk to chunk, which saves
// about eight allocations per chunk.
type chatJSON struct {
	src bytes.Reader
	dec *json.Decoder
	fed int64 // bytes the decoder has read from src, over all chunks
}

var errChatTrailing = errors.New("unexpected data after the JSON value")

func (j *chatJSON) decode(data []byte, v any) error {
	if j.dec == nil {
		j.dec = json.NewDecoder(&j.src)
	}
	j.src.Reset(data)
	err := j.dec.Decode(v)
	unread := j.src.Len() // never read by the decoder; dropped with the next Reset
	j.fed += int64(len(data) - unread)
	if err != nil {
		return err
	}
	// Bytes read but not consumed (after the value) stay buffered in the
	// decoder; together with the unread ones they must be blank.
	tail := int(j.fed-j.dec.InputOffset()) + unread
	if tail < 0 || tail > len(data) || len(bytes.TrimSpace(data[len(data)-tail:])) > 0 {
		return errChatTrailing
	}
	return nil
}

// chatCall is the decoder's state for one tool call.
type chatCall struct {
	index   int // the server's index; -1 when the server sent none
	id      string
	name    string
	sig     string // Gemini's thought signature (extra_content)
	started bool
	carry   chatCarry
}

// chatDecoder turns the events of a Chat Completions stream into
// runlet.StreamEvents and assembles the final response. It reads choice 0
// only.
type chatDecoder struct {
	provider  string
	requestID string
	thinkTags bool
	size      httpc.Budget

	json     chatJSON
	scan     chatScanner // the fast path
	slow     bool        // tests: encoding/json only
	body     chatChunk
	head     chatChunkHead
	usageBuf chatUsage // the fast path's storage for a chunk's usage
	acc      modelkit.Accumulator

	// events produced by the last feed or finish call
	events []runlet.StreamEvent

	id, model, finishReason string
	usage                   runlet.Usage
	haveUsage, done         bool
	refusal                 bool
	lastKind                runlet.StreamEventKind

	text, reasoning, refusalText chatCarry
	calls                        []chatCall
	byIndex                      map[int]int // tool-call index -> position in calls, once there are many
	details                      chatDetailsMerger
	annotations                  []json.RawMessage // streamed url_citation annotations
	plainReasoning               bool              // reasoning or reasoning_content seen
	think                        chatThink
	thinkEmit                    func(reasoning bool, b []byte) // d.emitThink, bound once
	scratch                      []byte
}

func newChatDecoder(provider string, thinkTags bool, limit int64) *chatDecoder {
	d := &chatDecoder{provider: provider, thinkTags: thinkTags, size: httpc.NewBudget(provider, limit), events: make([]runlet.StreamEvent, 0, 4)}
	d.head.chatChunk = &d.body
	d.thinkEmit = d.emitThink
	return d
}

var chatDone = []byte("[DONE]")

// feed decodes one SSE event. The StreamEvents it produced are in d.events
// until the next call.
func (d *chatDecoder) feed(ev sse.Event) error {
	d.events = d.events[:0]
	if d.done {
		return nil
	}
	data := ev.Data
	if ev.Type == "error" {
		return d.streamError(data)
	}
	if len(data) == 0 {
		return nil
	}
	if data[0] != '{' {
		data = bytes.TrimSpace(data)
		if bytes.Equal(data, chatDone) {
			d.done = true
			return nil
		}
	}
	// A chunk of many choices or tool calls is refused before it is
	// decoded (choices[].delta.tool_calls[] are 5 containers deep).
	if err := d.size.CheckObjects(data, 5); err != nil {
		err.RequestID = d.requestID
		return err
	}
	d.body.reset()
	var err error
	head := d.id == "" || d.model == ""
	if head {
		d.head.ID, d.head.Model = "", ""
	}
	if d.slow || !d.scan.chunk(data, &d.head, head, &d.usageBuf) {
		d.body.reset()
		if head {
			d.head.ID, d.head.Model = "", ""
			err = d.json.decode(data, &d.head)
		} else {
			err = d.json.decode(data, &d.body)
		}
	}
	if head {
		if d.id == "" {
			d.id = d.head.ID
		}
		if d.model == "" {
			d.model = d.head.Model
		}
	}
	if err != nil {
		return &runlet.ProviderError{Provider: d.provider, Message: "malformed stream chunk", RequestID: d.requestID,
			Err: fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err)}
	}
	if chatHasError(d.body.Error) {
		return d.streamError(data)
	}
	if u := d.body.Usage; u != nil {
		d.usage, d.haveUsage = u.usage(), true
	}
	for i := range d.body.Choices {
		if ch := &d.body.Choices[i]; ch.Index == 0 {
			d.choice(ch)
		}
	}
	return d.size.Err()
}

func (d *chatDecoder) streamError(data []byte) error {
	pe := chatErrorEvent(d.provider, data)
	pe.RequestID = d.requestID
	return pe
}

func (d *chatDecoder) choice(ch *chatChunkChoice) {
	delta := &ch.Delta
	r := &delta.ReasoningContent
	if r.empty() {
		r = &delta.Reasoning
	}
	if !r.empty() {
		d.plainReasoning = true
	}
	if b := d.reasoning.text(r, &d.scratch); len(b) > 0 {
		d.emit(runlet.StreamReasoningDelta, b)
	}
	if raw := delta.ReasoningDetails; len(raw) > 0 {
		// A new entry costs PartOverhead, as a part does.
		entries := len(d.details.entries)
		t := d.details.add(raw)
		_ = d.size.Add(len(raw) + (len(d.details.entries)-entries)*httpc.PartOverhead)
		// The same reasoning also comes as plain text from most servers:
		// the details' text is used only when it does not.
		if t != "" && !d.plainReasoning {
			d.emit(runlet.StreamReasoningDelta, []byte(t))
		}
	}
	if b := d.text.text(&delta.Content, &d.scratch); len(b) > 0 {
		d.content(b)
	}
	if raw := bytes.TrimSpace(delta.Annotations); len(raw) > 2 && raw[0] == '[' {
		// Citations: kept, to attach to the text at the end.
		_ = d.size.Add(len(raw))
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			d.annotations = append(d.annotations, list...)
		}
	}
	if b := d.refusalText.text(&delta.Refusal, &d.scratch); len(b) > 0 {
		d.refusal = true
		d.emit(runlet.StreamTextDelta, b)
	}
	for j := range delta.ToolCalls {
		d.toolCall(&delta.ToolCalls[j])
	}
	if ch.FinishReason != "" {
		d.finishReason = ch.FinishReason
	}
}

func (d *chatDecoder) content(b []byte) {
	if !d.thinkTags {
		d.emit(runlet.StreamTextDelta, b)
		return
	}
	d.think.feed(b, d.thinkEmit)
}

func (d *chatDecoder) emitThink(reasoning bool, b []byte) {
	if reasoning {
		d.emit(runlet.StreamReasoningDelta, b)
	} else {
		d.emit(runlet.StreamTextDelta, b)
	}
}

func (d *chatDecoder) emit(kind runlet.StreamEventKind, b []byte) {
	d.add(runlet.StreamEvent{Kind: kind, Delta: string(b)})
}

func (d *chatDecoder) add(ev runlet.StreamEvent) {
	parts := d.acc.Len()
	d.acc.Add(ev)
	if ev.Kind == runlet.StreamReasoningDelta && d.lastKind != runlet.StreamReasoningDelta {
		d.acc.SetReasoningState(runlet.ReasoningPart{Provider: d.provider})
	}
	// feed reports it; a new part costs PartOverhead
	_ = d.size.Add(len(ev.Delta) + len(ev.ID) + len(ev.Name) + (d.acc.Len()-parts)*httpc.PartOverhead)
	d.lastKind = ev.Kind
	d.events = append(d.events, ev)
}

func (d *chatDecoder) toolCall(tc *chatToolCallDelta) {
	pos := -1
	if tc.Index.set {
		pos = d.callAt(tc.Index.v)
	} else if n := len(d.calls); n > 0 && (tc.ID == "" || tc.ID == d.calls[n-1].id) {
		// No index (a loose server): a new ID starts a new call.
		pos = n - 1
	}
	if pos < 0 {
		idx := -1
		if tc.Index.set {
			idx = tc.Index.v
		}
		d.calls = append(d.calls, chatCall{index: idx})
		pos = len(d.calls) - 1
		d.indexCall(idx, pos)
	}
	c := &d.calls[pos]
	if sig := tc.ExtraContent.signature(); sig != "" {
		c.sig = sig
		_ = d.size.Add(len(sig))
	}
	ev := runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: pos}
	if tc.ID != "" && c.id == "" {
		c.id, ev.ID = tc.ID, tc.ID
	}
	if n := tc.Function.Name; n != "" && n != c.name {
		c.name, ev.Name = n, n
	}
	args := c.carry.text(&tc.Function.Arguments, &d.scratch)
	if c.started && ev.ID == "" && ev.Name == "" && len(args) == 0 {
		return // an empty trailer (Qwen repeats "id": "" and "arguments": "")
	}
	c.started = true
	ev.Delta = string(args)
	d.add(ev)
}

// callAt returns the position of the call with the stream index, or -1.
// Past a few calls it looks in a map, as the Responses assembler does: a
// stream of thousands of calls would otherwise cost time quadratic in
// their number (160,000 one-byte calls took 27 s).
func (d *chatDecoder) callAt(index int) int {
	if n := len(d.calls); n > 0 && d.calls[n-1].index == index {
		return n - 1
	}
	if d.byIndex != nil {
		if pos, ok := d.byIndex[index]; ok {
			return pos
		}
		return -1
	}
	for k := range d.calls {
		if d.calls[k].index == index {
			return k
		}
	}
	return -1
}

// indexCall records that the call at pos has the stream index; the first
// call with an index keeps it, as callAt's scan finds the first.
func (d *chatDecoder) indexCall(index, pos int) {
	switch {
	case d.byIndex != nil:
		if _, dup := d.byIndex[index]; !dup {
			d.byIndex[index] = pos
		}
	case len(d.calls) > respIndexAt:
		d.byIndex = make(map[int]int, 2*len(d.calls))
		for k := len(d.calls) - 1; k >= 0; k-- {
			d.byIndex[d.calls[k].index] = k
		}
	}
}

// finish checks that the stream completed and returns the assembled
// response. Deltas held back until the end are in d.events.
func (d *chatDecoder) finish() (*runlet.ModelResponse, error) {
	d.events = d.events[:0]
	switch {
	case d.finishReason == "" && d.done && d.haveUsage:
		// Some compatible servers end a complete answer with a usage chunk
		// and [DONE] but never send a finish_reason: the reason follows from
		// the content (tool_calls or stop).
	case d.finishReason == "" && d.done:
		return nil, d.incomplete("stream ended with [DONE] but no finish_reason")
	case d.finishReason == "":
		return nil, d.incomplete("stream ended before a finish_reason")
	case !d.done && !d.haveUsage:
		return nil, d.incomplete("stream ended before [DONE]")
	}
	if s := d.reasoning.flush(); s != "" {
		d.add(runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: s})
	}
	if s := d.text.flush(); s != "" {
		d.content([]byte(s))
	}
	if d.thinkTags {
		d.think.flush(d.thinkEmit)
	}
	if s := d.refusalText.flush(); s != "" {
		d.add(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: s})
	}
	for i := range d.calls {
		if s := d.calls[i].carry.flush(); s != "" {
			d.add(runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: i, Delta: s})
		}
	}
	resp := d.acc.Response(d.usage, chatFinish(d.finishReason, d.acc.HasToolCalls(), d.refusal))
	resp.ID, resp.Model = d.id, d.model
	if details := d.details.json(); details != "" {
		chatAttachDetails(&resp.Message, details, d.provider)
	}
	if len(d.annotations) > 0 {
		text := ""
		for _, p := range resp.Message.Parts {
			if t, ok := p.(runlet.TextPart); ok {
				text = t.Text
			}
		}
		chatAttachCitations(&resp.Message, chatCitationList(d.provider, d.annotations, text))
	}
	k := 0
	for i, p := range resp.Message.Parts {
		if tc, ok := p.(runlet.ToolCallPart); ok {
			if tc.ID == "" {
				tc.ID = "call_" + strconv.Itoa(k)
			}
			if k < len(d.calls) {
				tc = signedCall(tc, d.calls[k].sig, d.provider)
			}
			resp.Message.Parts[i] = tc
			k++
		}
	}
	return resp, nil
}

func (d *chatDecoder) incomplete(msg string) error {
	return &runlet.ProviderError{Provider: d.provider, Message: msg, Retryable: true, RequestID: d.requestID,
		Err: runlet.ErrStreamIncomplete}
}

// chatAttachDetails puts the streamed reasoning_details on the first
// reasoning part, or on a new one before the rest when there was no
// reasoning text.
func chatAttachDetails(msg *runlet.Message, details, provider string) {
	for i, p := range msg.Parts {
		if r, ok := p.(runlet.ReasoningPart); ok {
			r.Details, r.Provider = details, provider
			msg.Parts[i] = r
			return
		}
	}
	msg.Parts = append([]runlet.Part{runlet.ReasoningPart{Provider: provider, Details: details}}, msg.Parts...)
}
