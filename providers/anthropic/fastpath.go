package anthropic

import "github.com/runlet/runlet/internal/jsonscan"

// parseDelta is the decoder's fast path for content_block_delta events,
// nearly every event of a stream. It reads exactly the shape the API sends,
//
//	{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}
//
// (keys in any order, any JSON whitespace), into dl without reflection and
// with one allocation for the delta's text, using s (kept across events
// for its scratch buffer). Anything else — another event, an unknown key
// or delta type, null, malformed JSON — makes it return ok=false, and the
// caller decodes the event with encoding/json, which then reports errors.
// So the fast path never accepts what encoding/json would reject, and
// fills the same fields with the same values (FuzzParseDelta checks this).
func parseDelta(s *jsonscan.Scanner, data []byte, dl *eventDelta) (index int, ok bool) {
	s.Reset(data)
	var sawType, sawDelta bool
	*dl = eventDelta{}
	ok = s.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "type":
			var t []byte
			t, ok = s.PlainString()
			ok = ok && string(t) == "content_block_delta"
			sawType = true
		case "index":
			index, ok = s.Int()
		case "delta":
			ok = parseDeltaBody(s, dl)
			sawDelta = true
		}
		return ok // other keys: let encoding/json decide
	})
	return index, ok && sawType && sawDelta && s.End()
}

// Delta types, interned.
var deltaTypes = [...]string{"text_delta", "input_json_delta", "thinking_delta", "signature_delta"}

// parseDeltaBody reads the delta object into dl. Like encoding/json, a
// repeated "delta" key overwrites only the fields it has.
func parseDeltaBody(s *jsonscan.Scanner, dl *eventDelta) bool {
	return s.Object(func(key []byte) bool {
		var dst *string
		switch string(key) {
		case "type":
			t, ok := s.PlainString()
			if !ok {
				return false
			}
			for _, known := range deltaTypes {
				if string(t) == known {
					dl.Type = known
					return true
				}
			}
			return false
		case "text":
			dst = &dl.Text
		case "partial_json":
			dst = &dl.PartialJSON
		case "thinking":
			dst = &dl.Thinking
		case "signature":
			dst = &dl.Signature
		default:
			return false
		}
		var ok bool
		*dst, ok = s.Str()
		return ok
	})
}
