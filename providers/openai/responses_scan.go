package openai

import (
	"encoding/json"

	"github.com/runlet/runlet/internal/jsonscan"
)

// A fast path for the events of a Responses stream, such as
//
//	{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1",
//	 "output_index":0,"content_index":0,"delta":"Hel","logprobs":[]}
//
// respScanEvent decodes an event into a respEvent without reflection, with
// one allocation for the delta string (and none for the types the decoder
// reads). Objects kept raw ("item", "response", "code") are syntax-checked
// and copied, as encoding/json copies a json.RawMessage. It reports false
// for anything it is not sure about (an "error" object, null, a key that
// only matches a field case-insensitively, a non-integer index, malformed
// JSON), and the caller then decodes the event with encoding/json, which
// gives the same result or the error. FuzzResponsesScan checks the two
// agree.

// respEventFields are respEvent's JSON names: a key that matches one only
// case-insensitively is left to encoding/json.
var respEventFields = []string{"type", "delta", "output_index", "content_index", "summary_index", "item", "response", "code", "message", "error"}

// respScanEvent fills ev (already reset, its raw fields empty) from data
// using s. It reports whether it succeeded; on false ev must be reset
// again before other use.
func respScanEvent(s *jsonscan.Scanner, data []byte, ev *respEvent) bool {
	s.Reset(data)
	ok := s.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "type":
			var v []byte
			v, ok = s.PlainString()
			ev.Type = respEventType(v)
		case "delta":
			ev.Delta, ok = s.Str()
		case "message":
			ev.Message, ok = s.Str()
		case "output_index":
			ev.OutputIndex, ok = s.Int()
		case "content_index":
			ev.ContentIndex, ok = s.Int()
		case "summary_index":
			ev.SummaryIndex, ok = s.Int()
		case "item":
			ev.Item, ok = respScanRaw(s, ev.Item)
		case "response":
			ev.Response, ok = respScanRaw(s, ev.Response)
		case "code":
			ev.Code, ok = respScanRaw(s, ev.Code)
		default:
			if jsonscan.Folds(key, respEventFields...) {
				return false
			}
			_, ok = s.Skip()
		}
		return ok
	})
	return ok && s.End()
}

// respScanRaw copies a value into dst's storage, as encoding/json fills a
// json.RawMessage. null is left to encoding/json.
func respScanRaw(s *jsonscan.Scanner, dst []byte) ([]byte, bool) {
	if s.Peek() == 'n' {
		return dst, false
	}
	raw, ok := s.Skip()
	return append(dst[:0], raw...), ok
}

// respEventType returns the event type as a string, without allocating for
// the types the decoder reads.
func respEventType(b []byte) string {
	switch string(b) {
	case "response.output_text.delta":
		return "response.output_text.delta"
	case "response.function_call_arguments.delta":
		return "response.function_call_arguments.delta"
	case "response.reasoning_summary_text.delta":
		return "response.reasoning_summary_text.delta"
	case "response.reasoning_text.delta":
		return "response.reasoning_text.delta"
	case "response.refusal.delta":
		return "response.refusal.delta"
	case "response.output_text.done":
		return "response.output_text.done"
	case "response.function_call_arguments.done":
		return "response.function_call_arguments.done"
	case "response.reasoning_summary_text.done":
		return "response.reasoning_summary_text.done"
	case "response.output_item.added":
		return "response.output_item.added"
	case "response.output_item.done":
		return "response.output_item.done"
	case "response.content_part.added":
		return "response.content_part.added"
	case "response.content_part.done":
		return "response.content_part.done"
	case "response.created":
		return "response.created"
	case "response.in_progress":
		return "response.in_progress"
	case "response.completed":
		return "response.completed"
	}
	return string(b)
}

// The fast path for a non-streamed response body,
//
//	{"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1",
//	 "output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant",
//	 "content":[{"type":"output_text","text":"Hi","annotations":[]}]},
//	 {"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}"}],
//	 "usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11,...},"error":null,...}
//
// respScanBody reads it into the types encoding/json fills (w, and the
// output items into items) without reflection. Whatever it is not sure
// about — an error object, an item of more than the storage, a repeated
// object key, a key that matches a field only case-insensitively, a value
// of an unexpected type, malformed JSON — makes it decline, and the body
// is decoded with encoding/json, which gives the same result or the error
// (FuzzResponsesScanBody checks the two agree).

// Field names of the response types, for keys the scanner skips.
var (
	respBodyFields       = []string{"id", "model", "status", "output", "usage", "incomplete_details", "error"}
	respItemFields       = []string{"type", "id", "content", "summary", "encrypted_content", "call_id", "name", "arguments"}
	respPartFields       = []string{"type", "text", "refusal", "annotations"}
	respUsageFields      = []string{"input_tokens", "output_tokens", "total_tokens", "input_tokens_details", "output_tokens_details"}
	respIncompleteFields = []string{"reason"}
)

// respBodyScan reads a body with the fast path. Its scalars go to w,
// the output items to items (n of them).
type respBodyScan struct {
	s     *jsonscan.Scanner // apart, so that its storage leaking does not move w and items to the heap
	w     *respResponse
	items []respOutItem // fixed storage; more items decline
	n     int
}

// scan reports whether it read the whole body.
func (b *respBodyScan) scan(data []byte) bool {
	s := b.s
	s.Reset(data)
	w := b.w
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.StrField(&w.ID)
		case "model":
			return s.StrField(&w.Model)
		case "status":
			return b.status(&w.Status)
		case "output":
			if !jsonscan.Once(&seen, 1) || s.Peek() != '[' {
				return false
			}
			return s.Array(func() bool {
				if b.n == len(b.items) {
					return false
				}
				b.n++
				return b.item(&b.items[b.n-1])
			})
		case "usage":
			if s.Null() {
				w.Usage = nil
				return true
			}
			if !jsonscan.Once(&seen, 2) || s.Peek() != '{' {
				return false
			}
			w.Usage = new(respUsage)
			return b.usage(w.Usage)
		case "incomplete_details":
			if s.Null() {
				w.IncompleteDetails = nil
				return true
			}
			if !jsonscan.Once(&seen, 4) || s.Peek() != '{' {
				return false
			}
			w.IncompleteDetails = new(respIncomplete)
			return s.Object(func(key []byte) bool {
				if string(key) == "reason" {
					return s.StrField(&w.IncompleteDetails.Reason)
				}
				return s.SkipUnless(key, respIncompleteFields)
			})
		case "error":
			// null is the error of a response that has none; anything
			// else is left to encoding/json.
			if !s.Null() {
				return false
			}
			w.Error = nil
			return true
		}
		return s.SkipUnless(key, respBodyFields)
	})
	return ok && s.End()
}

// status reads a status or a type without allocating for the usual ones.
func (b *respBodyScan) status(dst *string) bool {
	if b.s.Null() {
		return true
	}
	v, ok := b.s.PlainString()
	if !ok {
		return false
	}
	switch string(v) {
	case "completed":
		*dst = "completed"
	case "incomplete":
		*dst = "incomplete"
	case "in_progress":
		*dst = "in_progress"
	case respItemMessage:
		*dst = respItemMessage
	case respItemFunctionCall:
		*dst = respItemFunctionCall
	case respItemReasoning:
		*dst = respItemReasoning
	case "output_text":
		*dst = "output_text"
	case "refusal":
		*dst = "refusal"
	case "summary_text":
		*dst = "summary_text"
	case "reasoning_text":
		*dst = "reasoning_text"
	default:
		*dst = string(v)
	}
	return true
}

func (b *respBodyScan) usage(u *respUsage) bool {
	s := b.s
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "input_tokens":
			return s.IntField(&u.InputTokens)
		case "output_tokens":
			return s.IntField(&u.OutputTokens)
		case "total_tokens":
			return s.IntField(&u.TotalTokens)
		case "input_tokens_details":
			return scanInputDetails(s, &seen, 1, &u.InputTokensDetails)
		case "output_tokens_details":
			return scanOutputDetails(s, &seen, 2, &u.OutputTokensDetails)
		}
		return s.SkipUnless(key, respUsageFields)
	})
}

// item reads an output item; a hosted tool's, kept whole, is left to
// encoding/json.
func (b *respBodyScan) item(it *respOutItem) bool {
	s := b.s
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return b.status(&it.Type)
		case "id":
			return s.StrField(&it.ID)
		case "encrypted_content":
			return s.StrField(&it.EncryptedContent)
		case "call_id":
			return s.StrField(&it.CallID)
		case "name":
			return s.StrField(&it.Name)
		case "arguments":
			return s.StrField(&it.Arguments)
		case "content":
			return jsonscan.Once(&seen, 1) && b.parts(&it.Content)
		case "summary":
			return jsonscan.Once(&seen, 2) && b.parts(&it.Summary)
		}
		return s.SkipUnless(key, respItemFields)
	})
	return ok && !respHostedItem(it.Type)
}

// parts reads a list of content or summary parts.
func (b *respBodyScan) parts(dst *[]respOutPart) bool {
	s := b.s
	if s.Null() {
		*dst = nil
		return true
	}
	if s.Peek() != '[' {
		return false
	}
	*dst = make([]respOutPart, 0, 1) // encoding/json: empty, not nil, for []
	return s.Array(func() bool {
		*dst = append(*dst, respOutPart{})
		p := &(*dst)[len(*dst)-1]
		return s.Object(func(key []byte) bool {
			switch string(key) {
			case "type":
				return b.status(&p.Type)
			case "text":
				return s.StrField(&p.Text)
			case "refusal":
				return s.StrField(&p.Refusal)
			case "annotations":
				// None: as encoding/json reads them; citations are left
				// to encoding/json.
				if s.Null() {
					p.Annotations = nil
					return true
				}
				if s.Peek() != '[' || !s.Array(func() bool { return false }) {
					return false
				}
				p.Annotations = []json.RawMessage{}
				return true
			}
			return s.SkipUnless(key, respPartFields)
		})
	})
}
