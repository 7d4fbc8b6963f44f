package bedrock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/modelkit"
)

// errMessageTooLarge is the cause of an event-stream message whose
// prelude announces more than the response limit.
var errMessageTooLarge = errors.New("event-stream message too large")

// frameReader reads the messages of an AWS event stream
// (application/vnd.amazon.eventstream) with the AWS SDK's decoder, which
// checks both CRCs. Before a message is decoded its prelude is checked:
// a message longer than the limit, or whose headers would not fit in it,
// is refused before anything is allocated for it (the SDK's decoder
// would read whatever length the prelude announces).
type frameReader struct {
	br    *bufio.Reader
	dec   *eventstream.Decoder
	limit int64
	raw   []byte // the message being decoded
	buf   []byte // its payload
}

func newFrameReader(r io.Reader, limit int64) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 32<<10), dec: eventstream.NewDecoder(), limit: limit}
}

// eventOverhead is what each event-stream message is charged against
// MaxResponseBytes besides what it adds to the response: 64 MiB allows
// 262,144 events, far beyond any real answer.
const eventOverhead = 256

// minMessageLen is the length of a message without headers or payload:
// its prelude (total length, headers length, the prelude's CRC: four
// bytes each) and its closing CRC.
const minMessageLen = 16

// maxHeadersLen bounds a message's headers. Bedrock's events carry three
// or four short headers; the SDK's decoder adds each header with a scan
// of those before it, so a message of thousands of tiny headers would
// cost quadratic time (FuzzDecodeStream found it).
const maxHeadersLen = 8 << 10

// next returns the next message. io.EOF means the stream ended between
// messages; io.ErrUnexpectedEOF that it ended inside one.
func (f *frameReader) next() (eventstream.Message, error) {
	p, err := f.br.Peek(8)
	if err != nil {
		if errors.Is(err, io.EOF) && len(p) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return eventstream.Message{}, err
	}
	total, headers := binary.BigEndian.Uint32(p[:4]), binary.BigEndian.Uint32(p[4:8])
	switch {
	case int64(total) > f.limit+minMessageLen:
		return eventstream.Message{}, errMessageTooLarge
	case total < minMessageLen || uint64(headers)+minMessageLen > uint64(total) || headers > maxHeadersLen:
		return eventstream.Message{}, fmt.Errorf("%w: message length %d with %d bytes of headers", runlet.ErrMalformedStream, total, headers)
	}
	// The whole message first: a stream cut inside it is a read error
	// (io.ErrUnexpectedEOF), anything the decoder then refuses is in the
	// bytes themselves (ErrMalformedStream).
	if cap(f.raw) < int(total) {
		f.raw = make([]byte, total)
	}
	raw := f.raw[:total]
	if _, err := io.ReadFull(f.br, raw); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return eventstream.Message{}, err
	}
	msg, err := f.dec.Decode(bytes.NewReader(raw), f.buf[:0])
	if err != nil {
		return eventstream.Message{}, fmt.Errorf("%w: %v", runlet.ErrMalformedStream, err) // %v: not the decoder's io.EOF
	}
	f.buf = msg.Payload
	return msg, nil
}

// header is a message header's value as a string ("" when absent).
func header(m eventstream.Message, name string) string {
	v := m.Headers.Get(name)
	if v == nil {
		return ""
	}
	return v.String()
}

// Stream events (the ConverseStreamOutput union members).
type streamEvent struct {
	Role              string `json:"role"`
	ContentBlockIndex int    `json:"contentBlockIndex"`
	Start             *struct {
		ToolUse *wireToolUse `json:"toolUse"`
	} `json:"start"`
	Delta *struct {
		Text    *string `json:"text"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse"`
		ReasoningContent *struct {
			Text            *string `json:"text"`
			Signature       *string `json:"signature"`
			RedactedContent *string `json:"redactedContent"`
		} `json:"reasoningContent"`
	} `json:"delta"`
	StopReason                    string          `json:"stopReason"`
	AdditionalModelResponseFields json.RawMessage `json:"additionalModelResponseFields"`
	Usage                         *wireUsage      `json:"usage"`
	Metrics                       json.RawMessage `json:"metrics"`
	Trace                         json.RawMessage `json:"trace"`
	PerformanceConfig             json.RawMessage `json:"performanceConfig"`
	ServiceTier                   json.RawMessage `json:"serviceTier"`
}

// streamBlock is what the decoder keeps of an open content block.
type streamBlock struct {
	kind      string // "text", "reasoning", "tool", "skip"
	call      int    // tool-call index, for kind "tool"
	signature strings.Builder
	redacted  []byte
	text      bool // a reasoning block had text
}

// decoder assembles one ConverseStream response.
type decoder struct {
	m      *Model
	acc    modelkit.Accumulator
	size   httpc.Budget
	blocks map[int]*streamBlock
	calls  int
	stop   string
	sawEnd bool // messageStop
	meta   bool // metadata
	info   ResponseInfo
	usage  runlet.Usage
}

func (m *Model) newDecoder(model, requestID string) *decoder {
	return &decoder{m: m, size: httpc.NewBudget(m.cfg.name, m.cfg.limit), blocks: map[int]*streamBlock{},
		info: ResponseInfo{Model: model, RequestID: requestID}}
}

// readStream decodes a ConverseStream response, calling emit for each
// delta and finally for StreamDone. A consumer that stops (emit returns
// false) ends it without error.
func (m *Model) readStream(ctx context.Context, resp *http.Response, model string, emit func(runlet.StreamEvent) bool) error {
	requestID := resp.Header.Get("X-Amzn-Requestid")
	f := newFrameReader(resp.Body, m.cfg.limit)
	d := m.newDecoder(model, requestID)
	for {
		msg, err := f.next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			switch {
			case errors.Is(err, runlet.ErrMalformedStream):
				return &runlet.ProviderError{Provider: m.cfg.name, RequestID: requestID, Message: "malformed event stream", Err: err}
			case errors.Is(err, io.EOF) && d.sawEnd:
				return d.finish(ctx, emit)
			case errors.Is(err, errMessageTooLarge):
				return httpc.EventTooLarge(m.cfg.name, requestID, m.cfg.limit, err)
			case errors.Is(err, io.EOF):
				return d.incomplete(nil)
			}
			return d.incomplete(err) // a connection reset, say
		}
		// Each message costs about a kilobyte of garbage to decode
		// (headers, JSON) whatever it adds: charged a share of it, a
		// stream of many empty events is bounded like one of many parts.
		if err := d.size.Add(eventOverhead); err != nil {
			return err
		}
		switch header(msg, ":message-type") {
		case "exception":
			return m.streamException(header(msg, ":exception-type"), msg.Payload, requestID)
		case "error":
			return m.streamError(header(msg, ":error-code"), header(msg, ":error-message"), requestID)
		case "event", "":
		default:
			continue
		}
		stopped, err := d.event(header(msg, ":event-type"), msg.Payload, emit)
		if err != nil || stopped {
			return err
		}
		if d.sawEnd && d.meta {
			return d.finish(ctx, emit)
		}
	}
}

// event handles one event; stopped reports that the consumer stopped.
func (d *decoder) event(typ string, payload []byte, emit func(runlet.StreamEvent) bool) (stopped bool, err error) {
	var ev streamEvent
	switch typ {
	case "messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata":
		if err := json.Unmarshal(payload, &ev); err != nil {
			return false, &runlet.ProviderError{Provider: d.m.cfg.name, RequestID: d.info.RequestID, Message: "malformed " + typ + " event",
				Err: fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err)}
		}
	default:
		return false, nil // an event type newer than this adapter
	}
	switch typ {
	case "contentBlockStart":
		if ev.Start != nil && ev.Start.ToolUse != nil {
			kind := "tool"
			if ev.Start.ToolUse.Type == "server_tool_use" {
				kind = "skip" // run by Bedrock, answered in the same message
			}
			b, err := d.block(ev.ContentBlockIndex, kind)
			if err != nil || b.kind != "tool" {
				return false, err
			}
			if err := d.size.Add(len(ev.Start.ToolUse.ToolUseID) + len(ev.Start.ToolUse.Name)); err != nil {
				return false, err
			}
			out := runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: b.call, ID: ev.Start.ToolUse.ToolUseID, Name: ev.Start.ToolUse.Name}
			if err := d.addTo(out); err != nil {
				return false, err
			}
			return !emit(out), nil
		}
	case "contentBlockDelta":
		if ev.Delta == nil {
			return false, nil
		}
		var out runlet.StreamEvent
		switch dl := ev.Delta; {
		case dl.Text != nil:
			b, err := d.block(ev.ContentBlockIndex, "text")
			if err != nil {
				return false, err
			}
			if b.kind != "text" || *dl.Text == "" {
				return false, nil
			}
			out = runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: *dl.Text}
		case dl.ToolUse != nil:
			b, err := d.block(ev.ContentBlockIndex, "tool")
			if err != nil {
				return false, err
			}
			if b.kind != "tool" {
				return false, nil
			}
			out = runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: b.call, Delta: dl.ToolUse.Input}
		case dl.ReasoningContent != nil:
			b, err := d.block(ev.ContentBlockIndex, "reasoning")
			if err != nil {
				return false, err
			}
			if b.kind != "reasoning" {
				return false, nil
			}
			rc := dl.ReasoningContent
			if rc.Signature != nil {
				b.signature.WriteString(*rc.Signature)
				return false, d.size.Add(len(*rc.Signature))
			}
			if rc.RedactedContent != nil {
				raw, err := base64.StdEncoding.DecodeString(*rc.RedactedContent)
				if err != nil {
					return false, &runlet.ProviderError{Provider: d.m.cfg.name, RequestID: d.info.RequestID, Message: "malformed redactedContent",
						Err: fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err)}
				}
				b.redacted = append(b.redacted, raw...)
				return false, d.size.Add(len(*rc.RedactedContent))
			}
			if rc.Text == nil || *rc.Text == "" {
				return false, nil
			}
			b.text = true
			out = runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: *rc.Text}
		default:
			return false, nil // citations, images, tool results: not read
		}
		if err := d.addTo(out); err != nil {
			return false, err
		}
		return !emit(out), nil
	case "contentBlockStop":
		d.closeBlock(ev.ContentBlockIndex)
	case "messageStop":
		d.sawEnd = true
		d.stop = ev.StopReason
		d.info.StopReason = ev.StopReason
		d.info.AdditionalModelResponseFields = ev.AdditionalModelResponseFields
	case "metadata":
		d.meta = true
		d.usage = usage(ev.Usage)
		d.info.Metrics, d.info.Trace = ev.Metrics, ev.Trace
		d.info.PerformanceConfig, d.info.ServiceTier = ev.PerformanceConfig, ev.ServiceTier
	}
	return false, nil
}

// block returns the open block with the stream's index, opening it as
// kind when it is new. A new block is charged httpc.PartOverhead against
// the response's budget, whatever it holds: a stream of many blocks that
// add nothing to the response (empty, skipped, never closed) is bounded
// too.
func (d *decoder) block(i int, kind string) (*streamBlock, error) {
	if b, ok := d.blocks[i]; ok {
		return b, nil
	}
	if err := d.size.AddParts(1); err != nil {
		return nil, err
	}
	b := &streamBlock{kind: kind}
	if kind == "tool" {
		b.call = d.calls
		d.calls++
	}
	d.blocks[i] = b
	return b, nil
}

// addTo counts a delta against the budget and adds it to the response.
func (d *decoder) addTo(ev runlet.StreamEvent) error {
	before := d.acc.Len()
	d.acc.Add(ev)
	if err := d.size.AddParts(d.acc.Len() - before); err != nil {
		return err
	}
	return d.size.Add(len(ev.Delta))
}

// closeBlock ends a content block: a reasoning block gets its signature
// or redacted content, and the next delta starts a new part.
func (d *decoder) closeBlock(i int) {
	b, ok := d.blocks[i]
	if !ok {
		return
	}
	delete(d.blocks, i)
	if b.kind == "reasoning" && (b.text || b.signature.Len() > 0 || len(b.redacted) > 0) {
		st := runlet.ReasoningPart{Provider: d.m.cfg.name, Signature: b.signature.String()}
		if len(b.redacted) > 0 {
			st.Encrypted = base64.StdEncoding.EncodeToString(b.redacted)
		}
		d.acc.SetReasoningState(st)
	}
	d.acc.EndPart()
}

// finish emits StreamDone with the assembled response.
func (d *decoder) finish(ctx context.Context, emit func(runlet.StreamEvent) bool) error {
	for i := range d.blocks {
		d.closeBlock(i)
	}
	resp := d.acc.Response(d.usage, finishReason(d.stop, d.acc.HasToolCalls()))
	resp.Model = d.info.Model
	if f := d.m.cfg.onResponse; f != nil {
		f(ctx, d.info)
	}
	emit(runlet.StreamEvent{Kind: runlet.StreamDone, Response: resp})
	return nil
}

// incomplete is the error of a stream that ended before messageStop.
func (d *decoder) incomplete(cause error) *runlet.ProviderError {
	err := runlet.ErrStreamIncomplete
	if cause != nil {
		err = fmt.Errorf("%w: %w", runlet.ErrStreamIncomplete, cause)
	}
	return &runlet.ProviderError{Provider: d.m.cfg.name, RequestID: d.info.RequestID, Message: "stream ended before messageStop", Retryable: true, Err: err}
}
