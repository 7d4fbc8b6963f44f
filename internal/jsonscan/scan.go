// Package jsonscan is the adapters' shared JSON fast path: a cursor that
// reads the small, flat shapes that make up nearly all of a streamed
// response (object keys, strings, integers, booleans) without reflection,
// and skips everything else with a full syntax check.
//
// Each method either reads exactly what encoding/json would decode into a
// value of the same Go type, or reports false. On false the caller gives
// the input to encoding/json, which then decodes it or reports the error;
// so a fast path never accepts what encoding/json rejects and never
// decodes a value differently. The fuzz tests hold the package to that.
//
// encoding/json matches object keys to struct fields without regard to
// case (and with Unicode folding): Key returns only keys without escapes
// and within ASCII, and Folds tells a caller whether a key it does not
// handle would still match one of its fields, so that it declines.
package jsonscan

import "unicode/utf8"

// maxDepth bounds Skip's nesting; deeper values are left to encoding/json.
const maxDepth = 64

// maxDigits is the longest integer Int reads: one that fits an int on
// every platform (9 digits with 32-bit ints).
const maxDigits = 9 + 9*(^uint(0)>>63)

// Scanner is a cursor over JSON input. The zero value scans nothing; Reset
// points it at input, keeping its scratch buffer.
type Scanner struct {
	b   []byte
	i   int
	buf []byte // Str's scratch for strings with escapes
}

// Reset starts scanning b from its beginning.
func (s *Scanner) Reset(b []byte) { s.b, s.i = b, 0 }

// Space skips JSON whitespace.
func (s *Scanner) Space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Take consumes c after optional whitespace, reporting whether it was there.
func (s *Scanner) Take(c byte) bool {
	s.Space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// Peek returns the next byte after whitespace, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.Space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// End reports whether only whitespace is left.
func (s *Scanner) End() bool {
	s.Space()
	return s.i == len(s.b)
}

// Object reads an object, calling member for each key with the cursor
// before the key's value, which member must read (or skip). It reports
// false for malformed input or when member does (to decline).
func (s *Scanner) Object(member func(key []byte) bool) bool {
	return s.object(member, s.Key)
}

// object reads an object, its keys with key.
func (s *Scanner) object(member func(key []byte) bool, key func() ([]byte, bool)) bool {
	if !s.Take('{') {
		return false
	}
	if s.Take('}') {
		return true
	}
	for {
		k, ok := key()
		if !ok || !member(k) {
			return false
		}
		if s.Take('}') {
			return true
		}
		if !s.Take(',') {
			return false
		}
	}
}

// Array reads an array, calling elem for each element with the cursor
// before it; elem must read it. It reports false for malformed input or
// when elem does.
func (s *Scanner) Array(elem func() bool) bool {
	if !s.Take('[') {
		return false
	}
	if s.Take(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.Take(']') {
			return true
		}
		if !s.Take(',') {
			return false
		}
	}
}

// Key reads an object key and the colon after it. It refuses keys with
// escapes or bytes outside ASCII: how encoding/json matches those to
// fields (unescaped, Unicode-folded) is left to it.
func (s *Scanner) Key() ([]byte, bool) {
	if !s.Take('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) && plain[s.b[s.i]] {
		s.i++
	}
	if s.i == len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	k := s.b[start:s.i]
	s.i++
	return k, s.Take(':')
}

// anyKey reads any well-formed key and its colon, for Skip.
func (s *Scanner) anyKey() ([]byte, bool) {
	k, _, ok := s.raw()
	return k, ok && s.Take(':')
}

// Folds reports whether key matches one of names the way encoding/json
// matches keys to fields, ignoring ASCII case. Key only returns ASCII
// keys, for which this is encoding/json's rule.
func Folds(key []byte, names ...string) bool {
	for _, n := range names {
		if len(n) == len(key) && foldEqual(key, n) {
			return true
		}
	}
	return false
}

func foldEqual(key []byte, name string) bool {
	for i := range len(key) {
		a, b := key[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// Int reads an integer as encoding/json decodes it into an int: no
// fraction or exponent. Integers longer than maxDigits are refused.
func (s *Scanner) Int() (int, bool) {
	s.Space()
	n, k, ok := parseInt(s.b[s.i:])
	if ok {
		s.i += k
	}
	return n, ok
}

// Int parses b, which must be exactly one JSON integer (see Scanner.Int).
func Int(b []byte) (int, bool) {
	n, k, ok := parseInt(b)
	return n, ok && k == len(b)
}

func parseInt(b []byte) (n, k int, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		k++
	}
	start := k
	for k < len(b) && '0' <= b[k] && b[k] <= '9' {
		n = n*10 + int(b[k]-'0')
		k++
	}
	digits := k - start
	if digits == 0 || digits > int(maxDigits) || (digits > 1 && b[start] == '0') {
		return 0, 0, false
	}
	if k < len(b) {
		switch b[k] {
		case '.', 'e', 'E':
			return 0, 0, false // encoding/json refuses these for an int: let it say so
		}
	}
	if neg {
		n = -n
	}
	return n, k, true
}

// Bool reads true or false.
func (s *Scanner) Bool() (v, ok bool) {
	switch s.Peek() {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	}
	return false, false
}

// Null consumes null, reporting whether it was there.
func (s *Scanner) Null() bool {
	return s.Peek() == 'n' && s.literal("null")
}

func (s *Scanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// Skip passes over one value of any kind, checking its syntax as
// encoding/json does. It returns the value's bytes, as a json.RawMessage
// holds them: a slice of the input, of capacity its length.
func (s *Scanner) Skip() ([]byte, bool) {
	s.Space()
	start := s.i
	if !s.skip(0) {
		return nil, false
	}
	// Capacity ends with the value: an append to it (a caller's, or its
	// caller's: a tool call's arguments) must not overwrite the input
	// after it, such as the next call's arguments.
	return s.b[start:s.i:s.i], true
}

func (s *Scanner) skip(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch s.Peek() {
	case '"':
		_, _, ok := s.raw()
		return ok
	case '{':
		return s.object(func([]byte) bool { return s.skip(depth + 1) }, s.anyKey)
	case '[':
		return s.Array(func() bool { return s.skip(depth + 1) })
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return s.number()
	}
	return false
}

// number passes over a number in JSON's grammar.
func (s *Scanner) number() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case !s.digits():
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func (s *Scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// plain marks the bytes a string holds as they are: ASCII, neither a
// control character nor '"' nor '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
