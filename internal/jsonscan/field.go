package jsonscan

// Helpers for the adapters' fast paths, which read a value into the
// fields of a wire type and decline (report false) wherever encoding/json
// could fill it differently.

// Once records bit in seen, reporting false if it was there: a repeated
// object or array key, which encoding/json merges, is left to it.
func Once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// SkipUnless passes over the value of a key the fast path does not read,
// unless the key matches one of fields (exactly or case-insensitively, as
// encoding/json would fill that field): then it reports false.
func (s *Scanner) SkipUnless(key []byte, fields []string) bool {
	if Folds(key, fields...) {
		return false
	}
	_, ok := s.Skip()
	return ok
}

// IntField reads an int field: an integer, or null, which leaves *dst as
// encoding/json does.
func (s *Scanner) IntField(dst *int) bool {
	if s.Null() {
		return true
	}
	v, ok := s.Int()
	if ok {
		*dst = v
	}
	return ok
}

// StrField reads a string field: a string, or null, which leaves *dst as
// encoding/json does.
func (s *Scanner) StrField(dst *string) bool {
	if s.Null() {
		return true
	}
	v, ok := s.Str()
	if ok {
		*dst = v
	}
	return ok
}
