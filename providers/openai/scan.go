package openai

import "github.com/runlet/runlet/internal/jsonscan"

// Readers the Chat Completions and Responses fast paths share.

// scanOnce records bit in seen, reporting false if it was there: a
// repeated object or array key, which encoding/json merges, is left to it.
func scanOnce(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// scanSkip passes over the value of a key the scanner does not read,
// unless the key matches one of fields (exactly or case-insensitively, as
// encoding/json would fill the field): then it declines.
func scanSkip(s *jsonscan.Scanner, key []byte, fields []string) bool {
	if jsonscan.Folds(key, fields...) {
		return false
	}
	_, ok := s.Skip()
	return ok
}

// scanInt reads an int field: an integer, or null (which leaves it).
func scanInt(s *jsonscan.Scanner, dst *int) bool {
	if s.Null() {
		return true
	}
	v, ok := s.Int()
	if ok {
		*dst = v
	}
	return ok
}

// scanString reads a string field: a string, or null (which leaves it).
func scanString(s *jsonscan.Scanner, dst *string) bool {
	if s.Null() {
		return true
	}
	v, ok := s.Str()
	if ok {
		*dst = v
	}
	return ok
}
