package gemini

import (
	"encoding/json"
	"sync"

	"github.com/runlet/runlet/internal/jsonscan"
)

// chunkScanner is the fast path for GenerateContentResponses, the body of
// generateContent and every event of a stream:
//
//	{"candidates":[{"content":{"parts":[{"text":"..."}],"role":"model"},"index":0}],
//	 "usageMetadata":{"promptTokenCount":9,...},"modelVersion":"...","responseId":"..."}
//
// It reads them without reflection into storage it reuses, so a streamed
// text chunk costs one allocation (the text). Whatever it is not sure
// about (an error or promptFeedback object, null, a key repeated or
// matching a field only case-insensitively, a part other than text,
// thought or function call, malformed JSON) makes it decline, and the
// response is decoded with encoding/json, which gives the same result or
// the error (FuzzChunkScanner checks this). The response it fills is
// valid until the next call.
type chunkScanner struct {
	s     jsonscan.Scanner
	cands []wireCandidate
	parts []wirePart
	texts []string
	calls []wireFunctionCall
	usage wireUsage
	model string // the last modelVersion and responseId, reused when repeated
	id    string
	// owned is set for a whole body nothing else reuses or changes:
	// function call args may then alias it instead of being copied.
	owned bool
	resp  wireResponse // a pooled scanner's response (see getChunkScanner)
}

// maxPooledParts bounds the storage a pooled chunkScanner keeps.
const maxPooledParts = 64

var chunkScanners = sync.Pool{New: func() any { return new(chunkScanner) }}

// getChunkScanner returns a scanner for one whole body, to release when
// its response has been assembled (the assembler copies what it keeps).
func getChunkScanner() *chunkScanner {
	c := chunkScanners.Get().(*chunkScanner)
	c.owned = true
	return c
}

// release drops what c holds, but for the last model and response IDs,
// and returns it to the pool.
func (c *chunkScanner) release() {
	if cap(c.parts) > maxPooledParts || cap(c.cands) > maxPooledParts || cap(c.texts) > maxPooledParts || cap(c.calls) > maxPooledParts {
		return
	}
	clear(c.cands[:cap(c.cands)])
	clear(c.parts[:cap(c.parts)])
	clear(c.texts[:cap(c.texts)])
	clear(c.calls[:cap(c.calls)])
	c.cands, c.parts, c.texts, c.calls = c.cands[:0], c.parts[:0], c.texts[:0], c.calls[:0]
	c.resp, c.owned = wireResponse{}, false
	c.s.Reset(nil)
	chunkScanners.Put(c)
}

// decode fills r from data: with the fast path, or with encoding/json.
func (c *chunkScanner) decode(data []byte, r *wireResponse) error {
	if c.scan(data, r) {
		return nil
	}
	*r = wireResponse{}
	return json.Unmarshal(data, r)
}

// Field names, for keys that match only case-insensitively.
var (
	responseFields  = []string{"candidates", "promptFeedback", "usageMetadata", "modelVersion", "responseId", "error"}
	candidateFields = []string{"content", "finishReason", "finishMessage", "index", "groundingMetadata", "urlContextMetadata"}
	contentFields   = []string{"role", "parts"}
	partFields      = []string{"text", "thought", "thoughtSignature", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"}
	callFields      = []string{"id", "name", "args"}
	usageFields     = []string{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "toolUsePromptTokenCount", "cachedContentTokenCount", "totalTokenCount"}
)

// scan is the fast path: it reports whether it filled r.
func (c *chunkScanner) scan(data []byte, r *wireResponse) bool {
	s := &c.s
	s.Reset(data)
	*r = wireResponse{}
	c.cands, c.parts, c.texts, c.calls = c.cands[:0], c.parts[:0], c.texts[:0], c.calls[:0]
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "candidates":
			if !jsonscan.Once(&seen, 1) || !s.Array(func() bool { return c.candidate() }) {
				return false
			}
			r.Candidates = c.cands
			return true
		case "usageMetadata":
			c.usage = wireUsage{}
			r.UsageMetadata = &c.usage
			return jsonscan.Once(&seen, 2) && c.usageMetadata()
		case "modelVersion":
			return c.reuse(&c.model, &r.ModelVersion)
		case "responseId":
			return c.reuse(&c.id, &r.ResponseID)
		}
		return s.SkipUnless(key, responseFields) // promptFeedback and error fold: left to encoding/json
	})
	return ok && s.End()
}

// reuse reads a string into *dst, taking *last's storage when it is the
// same value (modelVersion and responseId repeat on every chunk).
func (c *chunkScanner) reuse(last, dst *string) bool {
	v, ok := c.s.PlainString()
	if !ok {
		return false
	}
	if string(v) != *last {
		*last = string(v)
	}
	*dst = *last
	return true
}

func (c *chunkScanner) candidate() bool {
	s := &c.s
	c.cands = append(c.cands, wireCandidate{})
	cand := len(c.cands) - 1
	var seen uint8
	return s.Object(func(key []byte) bool {
		var ok bool
		cd := &c.cands[cand]
		switch string(key) {
		case "content":
			return jsonscan.Once(&seen, 1) && c.content(cand)
		case "finishReason":
			var v []byte
			if v, ok = s.PlainString(); ok {
				cd.FinishReason = internFinish(v)
			}
		case "finishMessage":
			cd.FinishMessage, ok = s.Str()
		case "index":
			cd.Index, ok = s.Int()
		default:
			return s.SkipUnless(key, candidateFields)
		}
		return ok
	})
}

func (c *chunkScanner) content(cand int) bool {
	s := &c.s
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "parts":
			start := len(c.parts)
			if !jsonscan.Once(&seen, 1) || !s.Array(func() bool { return c.part() }) {
				return false
			}
			c.cands[cand].Content.Parts = c.parts[start:len(c.parts):len(c.parts)]
			return true
		case "role":
			v, ok := s.PlainString()
			if ok {
				c.cands[cand].Content.Role = "model"
				if string(v) != "model" {
					c.cands[cand].Content.Role = string(v)
				}
			}
			return ok
		}
		return s.SkipUnless(key, contentFields)
	})
}

func (c *chunkScanner) part() bool {
	s := &c.s
	c.parts = append(c.parts, wirePart{})
	i := len(c.parts) - 1
	return s.Object(func(key []byte) bool {
		var ok bool
		p := &c.parts[i]
		switch string(key) {
		case "text":
			var t string
			if t, ok = s.Str(); ok {
				c.texts = append(c.texts, t)
				p.Text = &c.texts[len(c.texts)-1]
			}
		case "thought":
			p.Thought, ok = s.Bool()
		case "thoughtSignature":
			p.ThoughtSignature, ok = s.Str()
		case "functionCall":
			if p.FunctionCall != nil || s.Peek() != '{' {
				return false
			}
			c.calls = append(c.calls, wireFunctionCall{})
			p.FunctionCall = &c.calls[len(c.calls)-1]
			return c.call(p.FunctionCall)
		default:
			return s.SkipUnless(key, partFields) // inline data, files, responses: left to encoding/json
		}
		return ok
	})
}

func (c *chunkScanner) call(fc *wireFunctionCall) bool {
	s := &c.s
	return s.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "id":
			fc.ID, ok = s.Str()
		case "name":
			fc.Name, ok = s.Str()
		case "args":
			if s.Peek() == 'n' {
				return false // a RawMessage holds null: left to encoding/json
			}
			var raw []byte
			if raw, ok = s.Skip(); ok {
				if c.owned {
					fc.Args = raw
				} else {
					fc.Args = append(json.RawMessage(nil), raw...)
				}
			}
		default:
			return s.SkipUnless(key, callFields)
		}
		return ok
	})
}

func (c *chunkScanner) usageMetadata() bool {
	s := &c.s
	u := &c.usage
	return s.Object(func(key []byte) bool {
		var dst *int
		switch string(key) {
		case "promptTokenCount":
			dst = &u.PromptTokenCount
		case "candidatesTokenCount":
			dst = &u.CandidatesTokenCount
		case "thoughtsTokenCount":
			dst = &u.ThoughtsTokenCount
		case "toolUsePromptTokenCount":
			dst = &u.ToolUsePromptTokenCount
		case "cachedContentTokenCount":
			dst = &u.CachedContentTokenCount
		case "totalTokenCount":
			dst = &u.TotalTokenCount
		default:
			return s.SkipUnless(key, usageFields)
		}
		var ok bool
		*dst, ok = s.Int()
		return ok
	})
}

// internFinish returns a finish reason without allocating for the usual ones.
func internFinish(b []byte) string {
	for _, r := range [...]string{"STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "MALFORMED_FUNCTION_CALL", "OTHER"} {
		if string(b) == r {
			return r
		}
	}
	return string(b)
}
