package anthropic

import (
	"bytes"
	"unicode/utf8"
)

// parseDelta is the decoder's fast path for content_block_delta events,
// nearly every event of a stream. It reads exactly the shape the API sends,
//
//	{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}
//
// (keys in any order, any JSON whitespace), into dl without reflection and
// with one allocation for the delta's text. Anything else — another event,
// an unknown key or delta type, null, a surrogate escape, invalid UTF-8,
// malformed JSON — makes it return ok=false, and the caller decodes the
// event with encoding/json, which then reports errors. So the fast path
// never accepts what encoding/json would reject, and fills the same fields
// with the same values (FuzzParseDelta checks this).
func parseDelta(data []byte, dl *eventDelta) (index int, ok bool) {
	p := parser{b: data}
	var sawType, sawDelta bool
	*dl = eventDelta{}
	if !p.byte('{') {
		return 0, false
	}
	for {
		key, ok := p.key()
		if !ok {
			return 0, false
		}
		switch string(key) {
		case "type":
			s, ok := p.rawString()
			if !ok || string(s) != "content_block_delta" {
				return 0, false
			}
			sawType = true
		case "index":
			if index, ok = p.int(); !ok {
				return 0, false
			}
		case "delta":
			if !p.delta(dl) {
				return 0, false
			}
			sawDelta = true
		default:
			return 0, false
		}
		if p.byte(',') {
			continue
		}
		if !p.byte('}') {
			return 0, false
		}
		break
	}
	p.space()
	return index, sawType && sawDelta && p.i == len(p.b)
}

// Delta types, interned.
var deltaTypes = [...]string{"text_delta", "input_json_delta", "thinking_delta", "signature_delta"}

// delta reads the delta object into dl. Like encoding/json, a repeated
// "delta" key overwrites only the fields it has.
func (p *parser) delta(dl *eventDelta) bool {
	if !p.byte('{') {
		return false
	}
	if p.byte('}') {
		return true
	}
	for {
		key, ok := p.key()
		if !ok {
			return false
		}
		var dst *string
		switch string(key) {
		case "type":
			s, ok := p.rawString()
			if !ok {
				return false
			}
			known := false
			for _, t := range deltaTypes {
				if string(s) == t {
					dl.Type, known = t, true
					break
				}
			}
			if !known {
				return false
			}
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
		if dst != nil {
			if *dst, ok = p.string(); !ok {
				return false
			}
		}
		if p.byte(',') {
			continue
		}
		return p.byte('}')
	}
}

// parser is a cursor over one JSON value.
type parser struct {
	b []byte
	i int
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c, after optional whitespace.
func (p *parser) byte(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// key reads an object key and its colon. Keys with escapes are refused.
func (p *parser) key() ([]byte, bool) {
	k, ok := p.rawString()
	if !ok || bytes.IndexByte(k, '\\') >= 0 {
		return nil, false
	}
	return k, p.byte(':')
}

// rawString reads a string and returns its bytes between the quotes,
// escapes untouched. It refuses control characters and invalid UTF-8.
func (p *parser) rawString() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	ascii := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(s) {
				return nil, false // encoding/json replaces invalid bytes: let it
			}
			return s, true
		case c == '\\':
			p.i += 2 // the escaped byte is checked by unescape
		case c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
			p.i++
		default:
			p.i++
		}
	}
	return nil, false
}

// string reads a string value and unescapes it.
func (p *parser) string() (string, bool) {
	raw, ok := p.rawString()
	if !ok {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	return unescape(raw)
}

// unescape decodes JSON escapes. Surrogate escapes (\uD800-\uDFFF) are
// refused: encoding/json's handling of pairs and lone halves is left to it.
func unescape(raw []byte) (string, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(raw) {
			return "", false
		}
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+4 >= len(raw) {
				return "", false
			}
			var r rune
			for _, h := range raw[i+1 : i+5] {
				r <<= 4
				switch {
				case h >= '0' && h <= '9':
					r |= rune(h - '0')
				case h >= 'a' && h <= 'f':
					r |= rune(h - 'a' + 10)
				case h >= 'A' && h <= 'F':
					r |= rune(h - 'A' + 10)
				default:
					return "", false
				}
			}
			if r >= 0xD800 && r <= 0xDFFF {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return "", false
		}
	}
	return string(out), true
}

// int reads a JSON integer that fits an int without doubt (9 digits).
func (p *parser) int() (int, bool) {
	p.space()
	neg := false
	if p.i < len(p.b) && p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	start := p.i
	n := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int(p.b[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > 9 || (digits > 1 && p.b[start] == '0') {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case '.', 'e', 'E':
			return 0, false // encoding/json refuses these for an int: let it say so
		}
	}
	if neg {
		n = -n
	}
	return n, true
}
