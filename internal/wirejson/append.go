package wirejson

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// The append functions write request JSON directly into a byte slice, for
// adapters that encode their bodies without building intermediate values.
// Their output is byte for byte what Marshal writes for the same value
// (FuzzAppendString and FuzzAppendRaw hold them to it).

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as Marshal escapes it:
// without HTML escaping, with invalid UTF-8 replaced by U+FFFD and U+2028
// and U+2029 escaped. s is a string or bytes (a json.RawMessage sent as a
// string), written without converting one to the other.
func AppendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// safeASCII marks the ASCII bytes a JSON string holds as they are.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendEscaped appends s escaped as AppendString escapes it, without the
// quotes: pieces of valid UTF-8 appended one after another make one JSON
// string's contents.
func AppendEscaped[S ~string | ~[]byte](dst []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safeASCII[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		n := min(len(s)-i, utf8.UTFMax)
		c, size := utf8.DecodeRuneInString(string(s[i : i+n])) // at most 4 bytes: not allocated
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// AppendRaw appends raw as Marshal writes a json.RawMessage: compacted
// (whitespace between tokens dropped), "null" when nil. It reports an
// error, as Marshal does, for raw that is not valid JSON (empty included).
func AppendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	if compactASCII(raw) && json.Valid(raw) {
		return append(dst, raw...), nil
	}
	buf := bytes.NewBuffer(dst)
	if json.Compact(buf, raw) != nil {
		_, err := Marshal(raw) // the error Marshal reports
		return dst, err
	}
	return buf.Bytes(), nil
}

// compactASCII reports whether raw has no whitespace outside strings, so
// compacting it changes nothing. It does not check syntax.
func compactASCII(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// AppendFloat appends f as Marshal writes a float64: the shortest
// representation, in exponent form only for very small or large values.
// NaN and infinities are not JSON: it reports Marshal's error for them.
func AppendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		_, err := Marshal(f)
		return dst, err
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// CompactOwned is Compact for JSON the caller owns and nothing changes
// afterwards (a response body read for this call, a fresh copy): valid
// JSON that is already compact is returned as it is, not copied.
func CompactOwned(in json.RawMessage) json.RawMessage {
	if len(in) > 0 && string(in) != "null" && compactASCII(in) && json.Valid(in) {
		return in
	}
	return Compact(in)
}
