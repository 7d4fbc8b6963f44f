package jsonscan

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// PlainString reads a string that needs no decoding (no escapes, valid
// UTF-8) and returns its bytes, which alias the input. Any other string
// is refused, so callers can compare it with constants.
func (s *Scanner) PlainString() ([]byte, bool) {
	body, isPlain, ok := s.raw()
	return body, ok && isPlain
}

// String reads a string and appends its value to dst, decoded as
// encoding/json decodes it.
func (s *Scanner) String(dst []byte) ([]byte, bool) {
	body, isPlain, ok := s.raw()
	if !ok {
		return dst, false
	}
	if isPlain {
		return append(dst, body...), true
	}
	out, _, _, ok := unquote(dst, body, false)
	return out, ok
}

// Str reads a string and returns its value, decoded as encoding/json
// decodes it, in one allocation (none for the empty string).
func (s *Scanner) Str() (string, bool) {
	body, isPlain, ok := s.raw()
	if !ok {
		return "", false
	}
	if isPlain {
		return string(body), true
	}
	s.buf, _, _, ok = unquote(s.buf[:0], body, false)
	return string(s.buf), ok
}

// raw reads a string and returns its body between the quotes, checked as
// encoding/json checks it (escapes well-formed, no control characters;
// invalid UTF-8 is accepted, and replaced when decoded). isPlain reports a
// body that is its own value: no escapes, valid UTF-8.
func (s *Scanner) raw() (body []byte, isPlain, ok bool) {
	if !s.Take('"') {
		return nil, false, false
	}
	start, esc, ascii := s.i, false, true
	for s.i < len(s.b) {
		for s.i < len(s.b) && plain[s.b[s.i]] {
			s.i++
		}
		if s.i == len(s.b) {
			break
		}
		switch c := s.b[s.i]; {
		case c == '"':
			body = s.b[start:s.i:s.i] // see Skip
			s.i++
			return body, !esc && (ascii || utf8.Valid(body)), true
		case c == '\\':
			n := escapeLen(s.b[s.i:])
			if n == 0 {
				return nil, false, false
			}
			esc = true
			s.i += n
		case c < 0x20:
			return nil, false, false
		default: // c >= utf8.RuneSelf
			ascii = false
			s.i++
		}
	}
	return nil, false, false
}

// escapeLen returns the length of the well-formed escape b starts with,
// or 0.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if _, ok := hex4(b[2:]); ok {
			return 6
		}
	}
	return 0
}

// hex4 decodes the 4 hex digits b starts with.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// AppendFragment decodes body, the text between the quotes of a JSON
// string that is one fragment of a longer text streamed in pieces, and
// appends it to dst. Unlike encoding/json it keeps invalid UTF-8 bytes as
// they are, since a server may split a character between two fragments
// and only the joined text is valid; and a UTF-16 surrogate escape alone
// at the very start (lo) or end (hi) of body is returned rather than
// replaced, so that the caller can pair it with the neighbouring
// fragment's. Elsewhere an unpaired surrogate becomes U+FFFD, as in
// encoding/json. It reports false for a malformed escape.
func AppendFragment(dst, body []byte) (out []byte, lo, hi rune, ok bool) {
	return unquote(dst, body, true)
}

// unquote appends the decoded body of a string to dst: as encoding/json
// decodes it, or as a fragment (see AppendFragment).
func unquote(dst, body []byte, frag bool) (out []byte, lo, hi rune, ok bool) {
	first := true
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\\')
		if i < 0 {
			i = len(body)
		}
		if i > 0 {
			first = false
			if frag || utf8.Valid(body[:i]) {
				dst = append(dst, body[:i]...)
			} else {
				dst = appendValid(dst, body[:i])
			}
			body = body[i:]
			continue
		}
		if len(body) < 2 {
			return dst, 0, 0, false
		}
		var c byte
		switch body[1] {
		case '"', '\\', '/':
			c = body[1]
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			r, ok := hex4(body[2:])
			if !ok {
				return dst, 0, 0, false
			}
			body = body[6:]
			if utf16.IsSurrogate(r) {
				if r2, ok := nextU(body); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						body = body[6:]
						first = false
						continue
					}
				}
				switch {
				case frag && first && r >= 0xDC00:
					lo = r
					first = false
					continue
				case frag && len(body) == 0 && r < 0xDC00:
					hi = r
					continue
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			first = false
			continue
		default:
			return dst, 0, 0, false
		}
		dst = append(dst, c)
		body = body[2:]
		first = false
	}
	return dst, lo, hi, true
}

// nextU decodes a \u escape at the start of b.
func nextU(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	return hex4(b[2:])
}

// appendValid appends b with each invalid UTF-8 byte replaced by U+FFFD.
func appendValid(dst, b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, b[:n]...)
		}
		b = b[n:]
	}
	return dst
}
