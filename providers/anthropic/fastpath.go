package anthropic

import (
	"sync"

	"github.com/runlet/runlet/internal/jsonscan"
)

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

// Field names of the wire types, for keys that match only
// case-insensitively (encoding/json would fill the field: decline).
var (
	responseFields = []string{"type", "id", "model", "content", "stop_reason", "usage"}
	blockFields    = []string{"type", "text", "id", "name", "input", "thinking", "signature", "data", "citations", "tool_use_id", "content"}
	usageFields    = []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens_details", "server_tool_use"}
	detailsFields  = []string{"thinking_tokens"}
	serverFields   = []string{"web_search_requests"}

	eventFields      = []string{"type", "index", "delta", "content_block", "message", "usage", "request_id"}
	eventDeltaFields = []string{"type", "text", "partial_json", "thinking", "signature", "stop_reason", "citation"}
	startFields      = []string{"id", "model", "usage"}
)

// responseScan is the fast path for a whole (non-streamed) response body,
//
//	{"id":"msg_...","type":"message","role":"assistant","model":"...",
//	 "content":[{"type":"text","text":"..."},{"type":"tool_use","id":"...","name":"...","input":{...}}],
//	 "stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":9,...}}
//
// read into a wireResponse without reflection: the strings it keeps are
// allocated once each, type and stop reason strings not at all, a block's
// input is a slice of the body, and the response and its blocks live in
// a pooled responseScan. Whatever it is not sure about (null where a
// value is expected, a repeated content or usage key, a key matching a
// field only case-insensitively, malformed JSON) makes it decline, and
// the body is decoded with encoding/json, which gives the same result or
// the error (FuzzResponseScan checks this).
type responseScan struct {
	s      jsonscan.Scanner
	w      wireResponse
	blocks []wireBlock
	model  string // the last model read, kept across uses: it repeats
}

// maxPooledScanBlocks bounds the blocks a pooled responseScan keeps.
const maxPooledScanBlocks = 64

var responseScans = sync.Pool{New: func() any { return new(responseScan) }}

// getResponseScan returns a responseScan to use once and release.
func getResponseScan() *responseScan { return responseScans.Get().(*responseScan) }

// release drops what r holds and returns it to the pool.
func (r *responseScan) release() {
	if cap(r.blocks) > maxPooledScanBlocks {
		return
	}
	clear(r.blocks[:cap(r.blocks)])
	r.blocks, r.w = r.blocks[:0], wireResponse{}
	r.s.Reset(nil)
	responseScans.Put(r)
}

// scan reads body into r.w, reporting whether it could.
func (r *responseScan) scan(body []byte) bool {
	s := &r.s
	s.Reset(body)
	r.w, r.blocks = wireResponse{}, r.blocks[:0]
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return str(s, &r.w.Type)
		case "id":
			return str(s, &r.w.ID)
		case "model":
			save := *s
			if v, ok := s.PlainString(); ok && string(v) == r.model {
				r.w.Model = r.model
				return true
			}
			*s = save
			if !str(s, &r.w.Model) {
				return false
			}
			r.model = r.w.Model
			return true
		case "stop_reason":
			return str(s, &r.w.StopReason)
		case "content":
			if !jsonscan.Once(&seen, 1) || s.Null() {
				return false
			}
			start := len(r.blocks)
			if !s.Array(r.block) {
				return false
			}
			r.w.Content = r.blocks[start:len(r.blocks):len(r.blocks)]
			return true
		case "usage":
			return jsonscan.Once(&seen, 2) && scanUsage(s, &r.w.Usage)
		}
		return s.SkipUnless(key, responseFields)
	})
	return ok && s.End()
}

// intern returns the string for the type names and stop reasons the API
// sends, without allocating.
func intern(v []byte) (string, bool) {
	switch string(v) {
	case "message":
		return "message", true
	case "error":
		return "error", true
	case "text":
		return "text", true
	case "tool_use":
		return "tool_use", true
	case "thinking":
		return "thinking", true
	case "redacted_thinking":
		return "redacted_thinking", true
	case "server_tool_use":
		return "server_tool_use", true
	case "web_search_tool_result":
		return "web_search_tool_result", true
	case "end_turn":
		return "end_turn", true
	case "max_tokens":
		return "max_tokens", true
	case "stop_sequence":
		return "stop_sequence", true
	case "pause_turn":
		return "pause_turn", true
	case "refusal":
		return "refusal", true
	case "model_context_window_exceeded":
		return "model_context_window_exceeded", true
	case "message_start":
		return "message_start", true
	case "message_delta":
		return "message_delta", true
	case "message_stop":
		return "message_stop", true
	case "content_block_start":
		return "content_block_start", true
	case "content_block_stop":
		return "content_block_stop", true
	case "content_block_delta":
		return "content_block_delta", true
	case "":
		return "", true
	}
	return "", false
}

// str reads a string field; null leaves it, as encoding/json does.
func str(s *jsonscan.Scanner, dst *string) bool {
	if s.Null() {
		return true
	}
	if s.Peek() != '"' {
		return false
	}
	save := *s
	if v, ok := s.PlainString(); ok {
		if known, ok := intern(v); ok {
			*dst = known
		} else {
			*dst = string(v)
		}
		return true
	}
	*s = save // escapes or invalid UTF-8: read it again, decoding
	var ok bool
	*dst, ok = s.Str()
	return ok
}

func (r *responseScan) block() bool {
	r.blocks = append(r.blocks, wireBlock{})
	return scanBlock(&r.s, &r.blocks[len(r.blocks)-1])
}

// scanBlock reads a content block into b (a response's, or a
// content_block_start event's). Its input slices the input. It declines
// server tool blocks, which are kept whole, and citations.
func scanBlock(s *jsonscan.Scanner, b *wireBlock) bool {
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return str(s, &b.Type)
		case "text":
			return str(s, &b.Text)
		case "id":
			return str(s, &b.ID)
		case "name":
			return str(s, &b.Name)
		case "thinking":
			return str(s, &b.Thinking)
		case "signature":
			return str(s, &b.Signature)
		case "data":
			return str(s, &b.Data)
		case "input":
			if s.Peek() == 'n' {
				return false // a RawMessage holds null: left to encoding/json
			}
			raw, ok := s.Skip()
			b.Input = raw
			return ok
		case "citations":
			return s.Null() // citations: left to encoding/json
		case "tool_use_id", "content":
			return false // server tool results: left to encoding/json
		}
		return s.SkipUnless(key, blockFields)
	})
	return ok && !hostedCall(b.Type) && !hostedResult(b.Type)
}

// scanUsage reads a usage object into u, setting the fields present.
func scanUsage(s *jsonscan.Scanner, u *wireUsage) bool {
	var seenDetails bool
	return s.Object(func(key []byte) bool {
		var dst *int
		switch string(key) {
		case "input_tokens":
			dst = &u.InputTokens
		case "output_tokens":
			dst = &u.OutputTokens
		case "cache_creation_input_tokens":
			dst = &u.CacheCreationInputTokens
		case "cache_read_input_tokens":
			dst = &u.CacheReadInputTokens
		case "server_tool_use":
			if u.ServerToolUse != nil || s.Peek() != '{' {
				return false // null, repeated: left to encoding/json
			}
			u.ServerToolUse = new(struct {
				WebSearchRequests int `json:"web_search_requests"`
			})
			st := u.ServerToolUse
			return s.Object(func(key []byte) bool {
				if string(key) == "web_search_requests" {
					return s.IntField(&st.WebSearchRequests)
				}
				return s.SkipUnless(key, serverFields)
			})
		case "output_tokens_details":
			if seenDetails || u.OutputTokensDetails != nil || s.Peek() != '{' {
				return false // null, repeated: left to encoding/json
			}
			seenDetails = true
			u.OutputTokensDetails = new(struct {
				ThinkingTokens int `json:"thinking_tokens"`
			})
			d := u.OutputTokensDetails
			return s.Object(func(key []byte) bool {
				if string(key) == "thinking_tokens" {
					return s.IntField(&d.ThinkingTokens)
				}
				return s.SkipUnless(key, detailsFields)
			})
		default:
			return s.SkipUnless(key, usageFields)
		}
		return s.IntField(dst)
	})
}

// parseEvent is the decoder's fast path for the stream events other than
// text deltas (message_start, content_block_start and _stop,
// message_delta, message_stop, input and thinking deltas): it reads data
// into ev, which the caller has reset as for encoding/json, reporting
// whether it could. It declines what responseScan declines, and a
// repeated delta, content_block, message or usage key; the caller then
// decodes the event with encoding/json (FuzzParseEvent compares the two).
// A content block's input slices data, which the SSE reader reuses: the
// decoder copies what it keeps.
func parseEvent(s *jsonscan.Scanner, data []byte, ev *streamEvent) bool {
	s.Reset(data)
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return str(s, &ev.Type)
		case "index":
			return s.IntField(&ev.Index)
		case "request_id":
			return str(s, &ev.RequestID)
		case "delta":
			return jsonscan.Once(&seen, 1) && scanEventDelta(s, &ev.Delta)
		case "content_block":
			return jsonscan.Once(&seen, 2) && scanBlock(s, &ev.ContentBlock)
		case "message":
			return jsonscan.Once(&seen, 4) && scanStart(s, &ev.Message)
		case "usage":
			return jsonscan.Once(&seen, 8) && scanUsage(s, &ev.Usage)
		}
		return s.SkipUnless(key, eventFields)
	})
	return ok && s.End()
}

func scanEventDelta(s *jsonscan.Scanner, dl *eventDelta) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return str(s, &dl.Type)
		case "text":
			return str(s, &dl.Text)
		case "partial_json":
			return str(s, &dl.PartialJSON)
		case "thinking":
			return str(s, &dl.Thinking)
		case "signature":
			return str(s, &dl.Signature)
		case "stop_reason":
			return str(s, &dl.StopReason)
		case "citation":
			return false // citations_delta: left to encoding/json
		}
		return s.SkipUnless(key, eventDeltaFields)
	})
}

func scanStart(s *jsonscan.Scanner, m *eventStart) bool {
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return str(s, &m.ID)
		case "model":
			return str(s, &m.Model)
		case "usage":
			return jsonscan.Once(&seen, 1) && scanUsage(s, &m.Usage)
		}
		return s.SkipUnless(key, startFields)
	})
}
