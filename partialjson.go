package runlet

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// parsePartialJSON parses a prefix of a JSON document into the value it
// already determines, tolerating an unfinished end: open objects and arrays
// are closed, an open string keeps what it has (never half an escape or half
// a UTF-8 sequence), and a number or literal cut short is left out, as is an
// object key without its value. Whatever follows the first complete value is
// ignored. The result never contradicts the complete document: objects may
// lack keys, arrays trailing elements, and the last open string its end.
//
// Objects are map[string]any, numbers json.Number. ok is false when the
// prefix determines nothing yet or is not the prefix of a JSON document.
func parsePartialJSON(b []byte) (v any, ok bool) {
	p := partialParser{b: b}
	v, st := p.value(0)
	return v, st != absent && st != broken
}

// partialJSON is parsePartialJSON re-encoded as a JSON document.
func partialJSON(b []byte) (json.RawMessage, bool) {
	v, ok := parsePartialJSON(b)
	if !ok {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

type partialState uint8

const (
	complete partialState = iota // the value ended
	partial                      // the input ended inside the value; v holds its known part
	absent                       // the input ended before the value determined anything
	broken                       // not JSON
)

const maxPartialDepth = 512

type partialParser struct {
	b []byte
	i int
}

func (p *partialParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *partialParser) value(depth int) (any, partialState) {
	if depth > maxPartialDepth {
		return nil, broken
	}
	p.ws()
	if p.i >= len(p.b) {
		return nil, absent
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	}
	return nil, broken
}

func (p *partialParser) object(depth int) (any, partialState) {
	p.i++ // {
	obj := map[string]any{}
	p.ws()
	if p.i >= len(p.b) {
		return obj, partial
	}
	if p.b[p.i] == '}' {
		p.i++
		return obj, complete
	}
	for {
		p.ws()
		if p.i >= len(p.b) {
			return obj, partial
		}
		if p.b[p.i] != '"' {
			return nil, broken
		}
		k, st := p.str()
		switch st {
		case broken:
			return nil, broken
		case partial:
			return obj, partial // a key without its end says nothing yet
		}
		p.ws()
		if p.i >= len(p.b) {
			return obj, partial
		}
		if p.b[p.i] != ':' {
			return nil, broken
		}
		p.i++
		v, st := p.value(depth + 1)
		switch st {
		case broken:
			return nil, broken
		case absent:
			return obj, partial
		case partial:
			obj[k.(string)] = v
			return obj, partial
		}
		obj[k.(string)] = v
		p.ws()
		if p.i >= len(p.b) {
			return obj, partial
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return obj, complete
		default:
			return nil, broken
		}
	}
}

func (p *partialParser) array(depth int) (any, partialState) {
	p.i++ // [
	arr := []any{}
	p.ws()
	if p.i >= len(p.b) {
		return arr, partial
	}
	if p.b[p.i] == ']' {
		p.i++
		return arr, complete
	}
	for {
		v, st := p.value(depth + 1)
		switch st {
		case broken:
			return nil, broken
		case absent:
			return arr, partial
		case partial:
			return append(arr, v), partial
		}
		arr = append(arr, v)
		p.ws()
		if p.i >= len(p.b) {
			return arr, partial
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return arr, complete
		default:
			return nil, broken
		}
	}
}

// str reads a string; cut short, it returns the text decoded so far.
func (p *partialParser) str() (any, partialState) {
	p.i++ // "
	var out []byte
	for {
		start := p.i
		for p.i < len(p.b) && p.b[p.i] != '"' && p.b[p.i] != '\\' && p.b[p.i] >= 0x20 {
			p.i++
		}
		out = append(out, p.b[start:p.i]...)
		if p.i >= len(p.b) {
			return validString(trimPartialRune(out)), partial
		}
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return validString(out), complete
		case c < 0x20:
			return nil, broken
		}
		// an escape
		if p.i+1 >= len(p.b) {
			return validString(trimPartialRune(out)), partial
		}
		e := p.b[p.i+1]
		if e != 'u' {
			r, ok := simpleEscape(e)
			if !ok {
				return nil, broken
			}
			out = append(out, r)
			p.i += 2
			continue
		}
		r, n, st := p.unicodeEscape()
		switch st {
		case broken:
			return nil, broken
		case partial:
			return validString(trimPartialRune(out)), partial
		}
		out = utf8.AppendRune(out, r)
		p.i += n
	}
}

func simpleEscape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// unicodeEscape reads \uXXXX at p.i and, after a high surrogate, its low
// surrogate: a pair cut in the middle is partial rather than U+FFFD.
// Unpaired surrogates become U+FFFD, as in encoding/json.
func (p *partialParser) unicodeEscape() (rune, int, partialState) {
	r, st := p.hex4(p.i)
	if st != complete {
		return 0, 0, st
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, complete
	}
	if r >= 0xDC00 { // a low surrogate first
		return utf8.RuneError, 6, complete
	}
	j := p.i + 6
	switch {
	case j >= len(p.b), p.b[j] == '\\' && j+1 >= len(p.b):
		return 0, 0, partial
	case p.b[j] != '\\' || p.b[j+1] != 'u':
		return utf8.RuneError, 6, complete
	}
	r2, st := p.hex4(j)
	if st != complete {
		return 0, 0, st
	}
	if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
		return d, 12, complete
	}
	return utf8.RuneError, 6, complete
}

// hex4 reads the four hex digits of the \u escape at b[at:].
func (p *partialParser) hex4(at int) (rune, partialState) {
	digits := p.b[at+2 : min(at+6, len(p.b))]
	for _, c := range digits {
		if !isHex(c) {
			return 0, broken
		}
	}
	if len(digits) < 4 {
		return 0, partial
	}
	v, _ := strconv.ParseUint(string(digits), 16, 32)
	return rune(v), complete
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validString replaces invalid UTF-8 with U+FFFD, as encoding/json does.
func validString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string([]rune(string(b)))
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for n := 1; n <= 3 && n <= len(b); n++ {
		c := b[len(b)-n]
		if c < 0x80 {
			return b
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-n:]) {
				return b[:len(b)-n]
			}
			return b
		}
	}
	return b
}

// number reads a number; one the input ends inside is absent, since more
// digits may follow.
func (p *partialParser) number() (any, partialState) {
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			p.i++
			continue
		}
		break
	}
	if p.i >= len(p.b) {
		return nil, absent
	}
	s := string(p.b[start:p.i])
	if !validNumber(s) {
		return nil, broken
	}
	return json.Number(s), complete
}

func validNumber(s string) bool {
	var v any
	return json.Unmarshal([]byte(s), &v) == nil && s != "" && s[0] != '+'
}

func (p *partialParser) literal(word string, v any) (any, partialState) {
	rest := p.b[p.i:]
	if len(rest) < len(word) {
		if string(rest) == word[:len(rest)] {
			p.i = len(p.b)
			return nil, absent
		}
		return nil, broken
	}
	if string(rest[:len(word)]) != word {
		return nil, broken
	}
	p.i += len(word)
	return v, complete
}
