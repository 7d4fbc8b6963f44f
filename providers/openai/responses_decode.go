package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/jsonscan"
	"github.com/runlet/runlet/internal/sse"
)

// respEvent is one streamed event. Only what the adapter reads is modelled;
// it is reset and reused for every event.
type respEvent struct {
	Type         string          `json:"type"`
	OutputIndex  int             `json:"output_index"`
	ContentIndex int             `json:"content_index"`
	SummaryIndex int             `json:"summary_index"`
	Delta        string          `json:"delta"`
	Item         json.RawMessage `json:"item"`
	Response     json.RawMessage `json:"response"`
	// "error" events: the documented shape has code and message at the top
	// level; some servers nest them in "error".
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Error   *respErrorBody  `json:"error"`
}

// respDecoder turns a Responses event stream into runlet stream events.
type respDecoder struct {
	provider  string
	requestID string
	r         *sse.Reader
	ev        respEvent
	scan      jsonscan.Scanner // respScanEvent's, kept for its scratch buffer
	a         respAssembler
	head      int // next queued event in a.events
	err       error
	size      httpc.Budget
}

func newRespDecoder(provider string, body io.Reader, limit int64) *respDecoder {
	return &respDecoder{provider: provider, r: httpc.NewSSEReader(body, limit), a: respAssembler{provider: provider}, size: httpc.NewBudget(provider, limit)}
}

var respDoneSentinel = []byte("[DONE]")

// next returns the next stream event. After StreamDone or an error it keeps
// returning the error (io.EOF after StreamDone).
func (d *respDecoder) next() (runlet.StreamEvent, error) {
	for {
		if d.head < len(d.a.events) {
			ev := d.a.events[d.head]
			d.a.events[d.head] = runlet.StreamEvent{}
			d.head++
			return ev, nil
		}
		d.a.events, d.head = d.a.events[:0], 0
		if d.err != nil {
			return runlet.StreamEvent{}, d.err
		}
		sev, err := d.r.Next()
		if err != nil {
			d.err = d.incomplete(err)
			continue
		}
		if err := d.handle(sev.Type, sev.Data); err != nil {
			d.err = err
		}
	}
}

// handle decodes one SSE event and queues what it produces.
func (d *respDecoder) handle(sseType string, data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil
	}
	if bytes.Equal(data, respDoneSentinel) {
		// Some compatible servers end with [DONE]; the terminal event must
		// have come first.
		return d.incomplete(nil)
	}
	// An event of many output items (response.completed, whose
	// response.output[].content[] are 5 containers deep) is refused before
	// it is decoded.
	if err := d.size.CheckObjects(data, 5); err != nil {
		err.RequestID = d.requestID
		return err
	}
	ev := &d.ev
	*ev = respEvent{Item: ev.Item[:0], Response: ev.Response[:0], Code: ev.Code[:0]}
	var err error
	if !respScanEvent(&d.scan, data, ev) {
		*ev = respEvent{Item: ev.Item[:0], Response: ev.Response[:0], Code: ev.Code[:0]}
		err = json.Unmarshal(data, ev)
	}
	typ := ev.Type
	if typ == "" {
		typ = sseType
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" && typ != "" && !respHandled(typ) {
			return nil // an unknown event whose fields have other types
		}
		return d.malformed(typ, err)
	}
	if typ == "" {
		return d.malformed(typ, errors.New("event without a type"))
	}
	if err := d.size.Add(len(ev.Delta) + len(ev.Item)); err != nil {
		return err
	}
	a := &d.a
	// Every output item costs PartOverhead, so a stream of many tiny items
	// is refused before they grow the heap past a few times the limit.
	items := len(a.items)
	switch typ {
	case "response.output_text.delta":
		a.delta(ev.OutputIndex, respItemMessage, 0, ev.Delta, false)
	case "response.refusal.delta":
		a.delta(ev.OutputIndex, respItemMessage, 0, ev.Delta, true)
	case "response.function_call_arguments.delta":
		a.delta(ev.OutputIndex, respItemFunctionCall, 0, ev.Delta, false)
	case "response.reasoning_summary_text.delta":
		a.delta(ev.OutputIndex, respItemReasoning, ev.SummaryIndex, ev.Delta, false)
	case "response.reasoning_text.delta":
		a.delta(ev.OutputIndex, respItemReasoning, ev.ContentIndex, ev.Delta, false)
	case "response.output_item.added", "response.output_item.done":
		if len(ev.Item) == 0 {
			return d.malformed(typ, errors.New("no item"))
		}
		if err := respDecodeItem(ev.Item, &a.item); err != nil {
			return d.malformed(typ, err)
		}
		if typ == "response.output_item.added" {
			a.added(ev.OutputIndex, &a.item)
		} else {
			a.addFinal(ev.OutputIndex, &a.item)
		}
	case "response.completed", "response.incomplete", "response.failed":
		var w respResponse
		if len(ev.Response) > 0 {
			if err := json.Unmarshal(ev.Response, &w); err != nil {
				return d.malformed(typ, err)
			}
		}
		if typ == "response.failed" || w.Status == "failed" {
			return respFailedError(d.provider, w.Error, d.requestID)
		}
		if w.Status == "" {
			w.Status = strings.TrimPrefix(typ, "response.")
		}
		if err := a.finish(&w); err != nil {
			return d.malformed(typ, err)
		}
		if err := d.size.AddParts(len(a.items) - items); err != nil {
			return err
		}
		a.emit(runlet.StreamEvent{Kind: runlet.StreamDone, Response: a.response(&w)})
		d.err = io.EOF
	case "error":
		return d.streamError(data)
	}
	// Everything else (created, in_progress, content parts, annotations,
	// built-in tool progress, events added later) carries nothing to forward.
	return d.size.AddParts(len(a.items) - items)
}

// respHandled reports whether the decoder reads the event type's fields.
func respHandled(typ string) bool {
	switch typ {
	case "response.output_text.delta", "response.refusal.delta",
		"response.function_call_arguments.delta", "response.reasoning_summary_text.delta",
		"response.reasoning_text.delta", "response.output_item.added", "response.output_item.done",
		"response.completed", "response.incomplete", "response.failed", "error":
		return true
	}
	return false
}

func (d *respDecoder) malformed(typ string, err error) error {
	return &runlet.ProviderError{
		Provider:  d.provider,
		Message:   fmt.Sprintf("malformed %q stream event", typ),
		RequestID: d.requestID,
		Err:       fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err),
	}
}

// incomplete is the error for a stream that ended (cause nil or io.EOF) or
// broke before its terminal event.
func (d *respDecoder) incomplete(cause error) error {
	e := &runlet.ProviderError{
		Provider:  d.provider,
		Message:   "stream ended before response.completed",
		RequestID: d.requestID,
		Retryable: true,
		Err:       runlet.ErrStreamIncomplete,
	}
	if errors.Is(cause, sse.ErrEventTooLarge) {
		return httpc.EventTooLarge(d.provider, d.requestID, d.size.Limit(), cause)
	}
	if cause != nil && !errors.Is(cause, io.EOF) {
		e.Message = "stream broken before response.completed"
		e.Err = fmt.Errorf("%w: %w", runlet.ErrStreamIncomplete, cause)
	}
	return e
}

// streamError maps an "error" event.
func (d *respDecoder) streamError(data []byte) error {
	ev := &d.ev
	body := ev.Error
	if body == nil {
		body = &respErrorBody{Code: ev.Code, Message: ev.Message}
	} else if body.Message == "" {
		body.Message = ev.Message
	}
	e := respFailedError(d.provider, body, d.requestID)
	if e.Message == "" {
		e.Message = "error event without a message"
	}
	return e
}

// respFailedError maps the error of a failed response or an error event.
func respFailedError(provider string, body *respErrorBody, requestID string) *runlet.ProviderError {
	e := &runlet.ProviderError{Provider: provider, RequestID: requestID, Message: "response failed"}
	if body == nil {
		return e
	}
	if body.Message != "" {
		e.Message = body.Message
	}
	e.Type = body.Type
	e.Code = httpc.CodeString(body.Code)
	switch e.Code {
	case "server_error", "rate_limit_exceeded", "overloaded":
		e.Retryable = true
	}
	switch e.Type {
	case "server_error", "api_error", "rate_limit_error", "overloaded_error":
		e.Retryable = true
	}
	return e
}
