package openai

import "github.com/runlet/runlet/internal/jsonscan"

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
