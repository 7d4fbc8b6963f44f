package openai

import "github.com/runlet/runlet/internal/jsonscan"

// The usage details both OpenAI APIs report, read by the Chat Completions
// and Responses fast paths alike.

// inputDetails and outputDetails are the usage details both OpenAI APIs
// report, under prompt_/completion_tokens_details (Chat Completions) or
// input_/output_tokens_details (Responses).
type inputDetails struct {
	CachedTokens     int `json:"cached_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
}

type outputDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

var (
	inputDetailsFields  = []string{"cached_tokens", "cache_write_tokens"}
	outputDetailsFields = []string{"reasoning_tokens"}
)

// scanInputDetails reads an input details object into d (null leaves it);
// a second one in the same usage object, as seen and bit record, declines
// the fast path.
func scanInputDetails(s *jsonscan.Scanner, seen *uint8, bit uint8, d *inputDetails) bool {
	if s.Null() {
		return true
	}
	return jsonscan.Once(seen, bit) && s.Object(func(key []byte) bool {
		switch string(key) {
		case "cached_tokens":
			return s.IntField(&d.CachedTokens)
		case "cache_write_tokens":
			return s.IntField(&d.CacheWriteTokens)
		}
		return s.SkipUnless(key, inputDetailsFields)
	})
}

// scanOutputDetails is scanInputDetails for an output details object.
func scanOutputDetails(s *jsonscan.Scanner, seen *uint8, bit uint8, d *outputDetails) bool {
	if s.Null() {
		return true
	}
	return jsonscan.Once(seen, bit) && s.Object(func(key []byte) bool {
		if string(key) == "reasoning_tokens" {
			return s.IntField(&d.ReasoningTokens)
		}
		return s.SkipUnless(key, outputDetailsFields)
	})
}
