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
	blockFields    = []string{"type", "text", "id", "name", "input", "thinking", "signature", "data"}
	usageFields    = []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens_details"}
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
			return r.str(&r.w.Type)
		case "id":
			return r.str(&r.w.ID)
		case "model":
			save := *s
			if v, ok := s.PlainString(); ok && string(v) == r.model {
				r.w.Model = r.model
				return true
			}
			*s = save
			if !r.str(&r.w.Model) {
				return false
			}
			r.model = r.w.Model
			return true
		case "stop_reason":
			return r.str(&r.w.StopReason)
		case "content":
			if seen&1 != 0 || s.Null() {
				return false
			}
			seen |= 1
			start := len(r.blocks)
			if !s.Array(r.block) {
				return false
			}
			r.w.Content = r.blocks[start:len(r.blocks):len(r.blocks)]
			return true
		case "usage":
			if seen&2 != 0 {
				return false
			}
			seen |= 2
			return r.usage(&r.w.Usage)
		}
		return r.skip(key, responseFields)
	})
	return ok && s.End()
}

// skip passes over the value of a key the fast path does not read, unless
// the key matches one of fields.
func (r *responseScan) skip(key []byte, fields []string) bool {
	if jsonscan.Folds(key, fields...) {
		return false
	}
	_, ok := r.s.Skip()
	return ok
}

// Strings the fast path returns without allocating.
var internedStrings = [...]string{
	"message", "error", "text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result",
	"end_turn", "max_tokens", "stop_sequence", "pause_turn", "refusal", "model_context_window_exceeded",
}

// str reads a string field; null leaves it, as encoding/json does.
func (r *responseScan) str(dst *string) bool {
	s := &r.s
	if s.Null() {
		return true
	}
	if s.Peek() != '"' {
		return false
	}
	save := *s
	if v, ok := s.PlainString(); ok {
		for _, known := range internedStrings {
			if string(v) == known {
				*dst = known
				return true
			}
		}
		*dst = string(v)
		return true
	}
	*s = save // escapes or invalid UTF-8: read it again, decoding
	var ok bool
	*dst, ok = s.Str()
	return ok
}

func (r *responseScan) block() bool {
	s := &r.s
	r.blocks = append(r.blocks, wireBlock{})
	i := len(r.blocks) - 1
	return s.Object(func(key []byte) bool {
		b := &r.blocks[i]
		switch string(key) {
		case "type":
			return r.str(&b.Type)
		case "text":
			return r.str(&b.Text)
		case "id":
			return r.str(&b.ID)
		case "name":
			return r.str(&b.Name)
		case "thinking":
			return r.str(&b.Thinking)
		case "signature":
			return r.str(&b.Signature)
		case "data":
			return r.str(&b.Data)
		case "input":
			if s.Peek() == 'n' {
				return false // a RawMessage holds null: left to encoding/json
			}
			raw, ok := s.Skip()
			b.Input = raw
			return ok
		}
		return r.skip(key, blockFields)
	})
}

func (r *responseScan) usage(u *wireUsage) bool {
	s := &r.s
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
		case "output_tokens_details":
			if seenDetails || s.Peek() != '{' {
				return false // null, repeated: left to encoding/json
			}
			seenDetails = true
			u.OutputTokensDetails = new(struct {
				ThinkingTokens int `json:"thinking_tokens"`
			})
			d := u.OutputTokensDetails
			return s.Object(func(key []byte) bool {
				if string(key) == "thinking_tokens" {
					return r.int(&d.ThinkingTokens)
				}
				return r.skip(key, []string{"thinking_tokens"})
			})
		default:
			return r.skip(key, usageFields)
		}
		return r.int(dst)
	})
}

// int reads an int field; null leaves it, as encoding/json does.
func (r *responseScan) int(dst *int) bool {
	if r.s.Null() {
		return true
	}
	v, ok := r.s.Int()
	if ok {
		*dst = v
	}
	return ok
}
