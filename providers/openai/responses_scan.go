package openai

import (
	"strings"
	"unicode/utf8"
)

// A fast path for the events that make up nearly all of a Responses stream:
// the small, flat delta events such as
//
//	{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1",
//	 "output_index":0,"content_index":0,"delta":"Hel","logprobs":[]}
//
// respScanEvent decodes such an event into a respEvent without reflection
// and with one allocation (the delta string). It handles exactly the inputs
// it is sure about and reports false for anything else (escapes in the
// strings it keeps, invalid UTF-8, keys that need the full decoder such as
// "item" or "response", non-integer indexes, malformed JSON), and the caller
// then decodes the event with encoding/json, which gives the same result or
// the error. FuzzResponsesScan checks the two agree.

// respScanEvent fills ev (already reset) from data. It reports whether it
// succeeded; on false ev must be reset again before other use.
func respScanEvent(data []byte, ev *respEvent) bool {
	s := respScanner{b: data}
	s.ws()
	if !s.take('{') {
		return false
	}
	s.ws()
	if s.take('}') {
		return s.end()
	}
	for {
		key, ok := s.plainString()
		if !ok {
			return false
		}
		s.ws()
		if !s.take(':') {
			return false
		}
		s.ws()
		switch string(key) {
		case "type":
			v, ok := s.plainString()
			if !ok {
				return false
			}
			ev.Type = respEventType(v)
		case "delta":
			v, ok := s.plainString()
			if !ok {
				return false
			}
			ev.Delta = string(v)
		case "output_index":
			if ev.OutputIndex, ok = s.int(); !ok {
				return false
			}
		case "content_index":
			if ev.ContentIndex, ok = s.int(); !ok {
				return false
			}
		case "summary_index":
			if ev.SummaryIndex, ok = s.int(); !ok {
				return false
			}
		default:
			if respScanNeedsDecoder(key) || !s.skip(0) {
				return false
			}
		}
		s.ws()
		if s.take('}') {
			return s.end()
		}
		if !s.take(',') {
			return false
		}
		s.ws()
	}
}

// respScanNeedsDecoder reports whether a key is (case-insensitively, as
// encoding/json matches) a field of respEvent the scanner leaves to
// encoding/json.
func respScanNeedsDecoder(key []byte) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true // Unicode case folding: leave it to encoding/json
		}
	}
	switch len(key) {
	case 4, 5, 7, 8, 12, 13:
	default:
		return false
	}
	for _, f := range [...]string{"type", "delta", "output_index", "content_index", "summary_index", "item", "response", "code", "message", "error"} {
		if len(f) == len(key) && strings.EqualFold(f, string(key)) {
			return true
		}
	}
	return false
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
	}
	return string(b)
}

type respScanner struct {
	b []byte
	i int
}

func (s *respScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *respScanner) take(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (s *respScanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// plainString reads a string without escapes, control characters or
// invalid UTF-8, returning its bytes (valid until the input changes).
func (s *respScanner) plainString() ([]byte, bool) {
	if !s.take('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

// int reads a JSON integer that fits an int.
func (s *respScanner) int() (int, bool) {
	neg := s.take('-')
	start := s.i
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if s.i-start >= 15 {
			return 0, false // leave big numbers to encoding/json
		}
		n = n*10 + int(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || (digits > 1 && s.b[start] == '0') {
		return 0, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// skip passes over one JSON value, checking its syntax.
func (s *respScanner) skip(depth int) bool {
	if depth > 32 || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.skipString()
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		s.i++
		s.ws()
		if s.take(closer) {
			return true
		}
		for {
			if c == '{' {
				if !s.skipString() {
					return false
				}
				s.ws()
				if !s.take(':') {
					return false
				}
				s.ws()
			}
			if !s.skip(depth + 1) {
				return false
			}
			s.ws()
			if s.take(closer) {
				return true
			}
			if !s.take(',') {
				return false
			}
			s.ws()
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return s.skipNumber()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *respScanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// skipString passes over a string, checking escapes; other bytes (even
// invalid UTF-8, which encoding/json replaces) are accepted.
func (s *respScanner) skipString() bool {
	if !s.take('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i >= len(s.b) {
				return false
			}
			e := s.b[s.i]
			s.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(s.b)-s.i < 4 {
					return false
				}
				for _, h := range s.b[s.i : s.i+4] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				s.i += 4
			default:
				return false
			}
		}
	}
	return false
}

// skipNumber passes over a number in JSON's grammar.
func (s *respScanner) skipNumber() bool {
	s.take('-')
	switch {
	case s.take('0'):
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.take('.') {
		if !s.digits() {
			return false
		}
	}
	if s.take('e') || s.take('E') {
		if !s.take('+') {
			s.take('-')
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func (s *respScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
