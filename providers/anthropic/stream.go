package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/jsonscan"
	"github.com/runlet/runlet/internal/wirejson"
	"github.com/runlet/runlet/modelkit"
)

// streamEvent holds any Messages API stream event decoded with
// encoding/json; one value is reused for every event of a stream.
// content_block_delta events, nearly all of a stream, skip it: parseDelta
// reads them without reflection.
type streamEvent struct {
	Type         string     `json:"type"`
	Index        int        `json:"index"`
	Delta        eventDelta `json:"delta"`
	ContentBlock wireBlock  `json:"content_block"`
	Message      eventStart `json:"message"`
	Usage        wireUsage  `json:"usage"`
	RequestID    string     `json:"request_id"`
}

type eventDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	StopReason  string `json:"stop_reason"`
	// Citation is a citations_delta's citation.
	Citation json.RawMessage `json:"citation"`
}

type eventStart struct {
	ID    string    `json:"id"`
	Model string    `json:"model"`
	Usage wireUsage `json:"usage"`
}

// Block kinds the decoder tracks; every other block type is skipped.
const (
	blockSkip uint8 = iota
	blockText
	blockThinking
	blockTool
	blockHosted // a server tool's call: input grows from deltas
)

// maxBlocks bounds content block indexes, so a hostile stream cannot make
// the decoder allocate without limit.
const maxBlocks = 1 << 12

type blockState struct {
	kind      uint8
	call      int             // tool-call index (StreamEvent.Index) of a tool_use block
	input     json.RawMessage // tool_use input given whole in content_block_start
	gotJSON   bool            // an input_json_delta arrived
	signature string          // thinking signature, assembled from signature_delta
	sigParts  []byte          // signature_delta fragments after the first (amortised append)
	hosted    *hostedBlock    // a server tool's call
}

// hostedBlock is a server tool call block being streamed: its
// content_block_start block and the input its deltas carry.
type hostedBlock struct {
	block wireBlock
	input []byte
}

// decoder turns Messages API stream events into runlet stream events and
// assembles the final response. It is independent of HTTP so that fuzzing
// and benchmarks can feed it events directly.
type decoder struct {
	name   string
	ev     streamEvent
	scan   jsonscan.Scanner // parseDelta's, kept for its scratch buffer
	acc    modelkit.Accumulator
	blocks []blockState
	calls  int
	usage  wireUsage
	stop   string
	id     string
	model  string
	done   bool
	size   httpc.Budget
	// pending is a server tool's call waiting for its result block, the
	// next block, to make one part with it.
	pending []runlet.Part
}

// newDecoder returns a decoder for one stream whose text, reasoning and
// tool input may grow to limit bytes (zero: the default).
func newDecoder(name string, limit int64) *decoder {
	return &decoder{name: name, size: httpc.NewBudget(name, limit)}
}

// add accumulates a delta and counts it against the size limit (see
// tooLarge).
func (d *decoder) add(out runlet.StreamEvent) {
	_ = d.size.Add(len(out.Delta) + len(out.ID) + len(out.Name))
	d.acc.Add(out)
}

// tooLarge is the error once the response passed its size limit.
func (d *decoder) tooLarge() error { return d.size.Err() }

// decode handles one event. It returns the delta to yield, if any (ok), and
// an error for error events and malformed data. After message_stop, done
// is set and response returns the assembled response.
//
// Every part the event starts costs PartOverhead besides its bytes, so a
// stream of many tiny blocks (a block index may start again) is refused
// before it grows the heap past a few times the limit.
func (d *decoder) decode(sseType string, data []byte) (out runlet.StreamEvent, ok bool, err error) {
	parts := d.acc.Len()
	out, ok, err = d.decodeEvent(sseType, data)
	if n := d.acc.Len() - parts; n > 0 {
		_ = d.size.AddParts(n) // tooLarge reports it
	}
	return out, ok, err
}

func (d *decoder) decodeEvent(sseType string, data []byte) (out runlet.StreamEvent, ok bool, err error) {
	if sseType == "ping" {
		return out, false, nil
	}
	var dl eventDelta
	if i, ok := parseDelta(&d.scan, data, &dl); ok {
		return d.delta(i, &dl)
	}
	ev := &d.ev
	*ev = streamEvent{Usage: unsetUsage}
	ev.Message.Usage = unsetUsage
	if parseEvent(&d.scan, data, ev) {
		return d.event(sseType, data)
	}
	*ev = streamEvent{Usage: unsetUsage}
	ev.Message.Usage = unsetUsage
	if err := json.Unmarshal(data, ev); err != nil {
		if sseType == "error" { // an error event we cannot parse is still an error
			return out, false, d.streamError(data, "")
		}
		return out, false, &runlet.ProviderError{Provider: d.name, Message: "malformed stream event", Err: fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err)}
	}
	return d.event(sseType, data)
}

// event handles the event decoded into d.ev.
func (d *decoder) event(sseType string, data []byte) (out runlet.StreamEvent, ok bool, err error) {
	ev := &d.ev
	typ := ev.Type
	if typ == "" {
		typ = sseType
	}
	switch typ {
	case "content_block_delta":
		return d.delta(ev.Index, &ev.Delta)
	case "content_block_start":
		return d.start()
	case "content_block_stop":
		return d.stopBlock()
	case "message_start":
		d.id, d.model = ev.Message.ID, ev.Message.Model
		d.usage = wireUsage{}
		d.usage.merge(ev.Message.Usage)
	case "message_delta":
		if ev.Delta.StopReason != "" {
			d.stop = ev.Delta.StopReason
		}
		d.usage.merge(ev.Usage) // cumulative counts; absent fields stay
	case "message_stop":
		d.done = true
	case "error":
		return out, false, d.streamError(data, ev.RequestID)
	}
	// ping and unknown event types are skipped.
	return out, false, nil
}

func (d *decoder) streamError(data []byte, requestID string) error {
	e := httpc.ErrorFromBody(d.name, data)
	e.RequestID = requestID
	if e.Message == "" {
		e.Message = "error event in stream"
	}
	return e
}

// block returns the state of block i, growing the table as needed.
func (d *decoder) block(i int) (*blockState, error) {
	if i < 0 || i >= maxBlocks {
		return nil, &runlet.ProviderError{Provider: d.name, Message: fmt.Sprintf("content block index %d out of range", i), Err: runlet.ErrMalformedStream}
	}
	for len(d.blocks) <= i {
		d.blocks = append(d.blocks, blockState{})
	}
	return &d.blocks[i], nil
}

func (d *decoder) start() (out runlet.StreamEvent, ok bool, err error) {
	b, err := d.block(d.ev.Index)
	if err != nil {
		return out, false, err
	}
	cb := &d.ev.ContentBlock
	*b = blockState{}
	d.acc.EndPart()
	switch {
	case hostedCall(cb.Type) && len(cb.Raw) > 0:
		d.flushHosted()
		_ = d.size.Add(len(cb.Raw))
		b.kind = blockHosted
		b.hosted = &hostedBlock{block: *cb}
		return out, false, nil
	case hostedResult(cb.Type) && len(cb.Raw) > 0:
		_ = d.size.Add(len(cb.Raw))
		parts := addResult(d.name, d.pending, cb, cb.Raw)
		d.pending = nil
		for _, p := range parts {
			d.acc.AddPart(p)
		}
		return out, false, nil
	}
	d.flushHosted()
	switch cb.Type {
	case "text":
		b.kind = blockText
		if cb.Text != "" {
			out = runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: cb.Text}
			d.add(out)
		}
		for _, raw := range cb.Citations { // usually [] here, then citations_delta
			if c, ok := citation(d.name, raw); ok {
				_ = d.size.Add(len(raw))
				d.acc.AddCitation(c)
			}
		}
		return out, cb.Text != "", nil
	case "thinking":
		b.kind = blockThinking
		b.signature = cb.Signature
		d.acc.SetReasoningState(runlet.ReasoningPart{Provider: d.name, Signature: cb.Signature})
		if cb.Thinking != "" {
			out = runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: cb.Thinking}
			d.add(out)
			return out, true, nil
		}
	case "redacted_thinking":
		d.acc.SetReasoningState(runlet.ReasoningPart{Provider: d.name, Encrypted: cb.Data})
		d.acc.EndPart()
	case "tool_use":
		b.kind = blockTool
		b.call = d.calls
		d.calls++
		if len(cb.Input) > 0 && string(cb.Input) != "{}" && string(cb.Input) != "null" {
			b.input = append(json.RawMessage(nil), cb.Input...)
		}
		out = runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: b.call, ID: cb.ID, Name: cb.Name}
		d.add(out)
		return out, true, nil
	}
	return out, false, nil
}

// delta handles a content_block_delta for block i.
func (d *decoder) delta(i int, dl *eventDelta) (out runlet.StreamEvent, ok bool, err error) {
	if i < 0 || i >= len(d.blocks) {
		return out, false, nil // delta of a block never started: skip
	}
	b := &d.blocks[i]
	switch {
	case b.kind == blockText && dl.Type == "text_delta":
		if dl.Text == "" {
			return out, false, nil
		}
		out = runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: dl.Text}
	case b.kind == blockTool && dl.Type == "input_json_delta":
		if dl.PartialJSON == "" {
			return out, false, nil
		}
		b.gotJSON = true
		out = runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: b.call, Delta: dl.PartialJSON}
	case b.kind == blockHosted && dl.Type == "input_json_delta":
		_ = d.size.Add(len(dl.PartialJSON))
		b.hosted.input = append(b.hosted.input, dl.PartialJSON...)
		return out, false, nil
	case b.kind == blockText && dl.Type == "citations_delta":
		if c, ok := citation(d.name, dl.Citation); ok {
			_ = d.size.Add(len(dl.Citation))
			d.acc.AddCitation(c)
		}
		return out, false, nil
	case b.kind == blockThinking && dl.Type == "thinking_delta":
		if dl.Thinking == "" {
			return out, false, nil
		}
		out = runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: dl.Thinking}
	case b.kind == blockThinking && dl.Type == "signature_delta":
		_ = d.size.Add(len(dl.Signature))
		if b.signature == "" {
			// Nearly always the only one: set at once.
			b.signature = dl.Signature
			d.acc.SetReasoningState(runlet.ReasoningPart{Signature: b.signature})
		} else {
			// More fragments: joined once, when the block stops (a
			// string += per fragment would be quadratic).
			b.sigParts = append(b.sigParts, dl.Signature...)
		}
		return out, false, nil
	default:
		return out, false, nil // citations_delta, unknown deltas, skipped blocks
	}
	d.add(out)
	return out, true, nil
}

func (d *decoder) stopBlock() (out runlet.StreamEvent, ok bool, err error) {
	i := d.ev.Index
	if i >= 0 && i < len(d.blocks) {
		b := &d.blocks[i]
		if b.kind == blockHosted && b.hosted != nil {
			d.pending = append(d.pending, b.hosted.part(d.name))
			b.hosted = nil
			return out, false, nil
		}
		if b.kind == blockTool && !b.gotJSON && b.input != nil {
			// The whole input came with content_block_start.
			out = runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: b.call, Delta: string(b.input)}
			b.input = nil
			d.add(out)
			d.acc.EndPart()
			return out, true, nil
		}
		if len(b.sigParts) > 0 {
			b.signature += string(b.sigParts)
			b.sigParts = nil
			d.acc.SetReasoningState(runlet.ReasoningPart{Signature: b.signature})
		}
	}
	d.acc.EndPart()
	return out, false, nil
}

// flushHosted adds the server tool calls still waiting for a result.
func (d *decoder) flushHosted() {
	for _, p := range d.pending {
		d.acc.AddPart(p)
	}
	d.pending = nil
}

// part is the streamed call as a part: the start block with the input the
// deltas carried (the whole input of the start block when none came).
func (h *hostedBlock) part(name string) runlet.HostedToolPart {
	input := h.block.Input
	if len(h.input) > 0 {
		input = h.input
	}
	input = wirejson.CompactOwned(append(json.RawMessage(nil), input...))
	raw := h.block.Raw
	if len(h.input) > 0 && json.Valid(h.input) {
		raw = withInput(raw, h.input)
	}
	return callPart(name, &h.block, raw, input)
}

// withInput returns the block raw with its "input" set to input (the
// start block of a stream has an empty input, which the deltas fill).
func withInput(raw, input json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return raw
	}
	fields["input"] = input
	out, err := json.Marshal(fields)
	if err != nil {
		return raw
	}
	return out
}

// response returns the assembled response.
func (d *decoder) response() *runlet.ModelResponse {
	d.flushHosted()
	resp := d.acc.Response(d.usage.usage(), finishReason(d.stop, d.acc.HasToolCalls()))
	resp.ID, resp.Model = d.id, d.model
	return resp
}

// incomplete is the error for a stream that ended before message_stop.
func (d *decoder) incomplete(cause error) *runlet.ProviderError {
	err := runlet.ErrStreamIncomplete
	if cause != nil {
		err = fmt.Errorf("%w: %w", runlet.ErrStreamIncomplete, cause)
	}
	return &runlet.ProviderError{Provider: d.name, Message: "stream ended before message_stop", Retryable: true, Err: err}
}
