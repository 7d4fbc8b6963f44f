package openai

import (
	"bytes"
	"encoding/json"

	"github.com/runlet/runlet/internal/jsonscan"
)

// The Chat Completions fast path: a non-streamed body
//
//	{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini",
//	 "choices":[{"index":0,"message":{"role":"assistant","content":"Hi","refusal":null,
//	 "tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
//	 "logprobs":null,"finish_reason":"stop"}],
//	 "usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10,...}}
//
// and a stream chunk
//
//	{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini",
//	 "choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":null}
//
// (content, refusal, reasoning_content or reasoning, tool-call deltas by
// index, finish_reason, usage) are read with internal/jsonscan into the
// same wire types encoding/json fills, without reflection and into storage
// the caller keeps. Whatever the scanner is not sure about — an "error",
// reasoning_details or extra_content value, more than one choice in a
// body, a repeated object key, a key that matches a field only
// case-insensitively, a value of an unexpected type, malformed JSON —
// makes it decline, and the caller decodes with encoding/json, which gives
// the same result or the error. FuzzChatScanCompletion and
// FuzzChatScanChunk check the two agree.

// Field names of the wire types, for keys the scanner does not read
// itself: one matching a field (exactly or case-insensitively) makes it
// decline.
var (
	chatTopFields       = []string{"id", "model", "choices", "usage", "error"}
	chatChoiceFields    = []string{"index", "message", "finish_reason"}
	chatMessageFields   = []string{"content", "refusal", "reasoning_content", "reasoning", "reasoning_details", "tool_calls", "extra_content", "annotations"}
	chatRespCallFields  = []string{"id", "function", "extra_content"}
	chatChunkFields     = []string{"index", "delta", "finish_reason"}
	chatDeltaFields     = []string{"content", "refusal", "reasoning_content", "reasoning", "reasoning_details", "tool_calls", "annotations"}
	chatCallDeltaFields = []string{"index", "id", "function", "extra_content"}
	chatFuncFields      = []string{"name", "arguments"}
	chatUsageFields     = []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details",
		"completion_tokens_details", "prompt_cache_hit_tokens", "cached_tokens", "reasoning_tokens", "server_tool_use_details"}
)

// chatScanner reads Chat Completions JSON with the fast path. alias lets
// string fields (chatStr) point into the input instead of being copied:
// for a non-streamed body, which outlives the decoded values' use; never
// for stream chunks, whose data the SSE reader reuses and whose chatStr
// buffers are reused.
type chatScanner struct {
	s     jsonscan.Scanner
	alias bool
}

// chatScanStore is where a non-streamed body is scanned: into w's scalar
// fields, and arrays and counts that the function owning the storage
// links into w afterwards (separate variables there, so that they stay on
// its stack: linking them from here, or within one variable, would move
// them to the heap).
type chatScanStore struct {
	w        *chatCompletion
	choices  *[1]chatChoice // more than one choice is left to encoding/json
	nChoices int
	calls    *[8]chatRespCall // tool calls; more are left to encoding/json
	nCalls   int
	usage    *chatUsage
	hasUsage bool
}

// str reads a chatStr as its UnmarshalJSON would, for strings and null;
// anything else declines.
func (c *chatScanner) str(dst *chatStr) bool {
	s := &c.s
	if s.Null() {
		dst.reset()
		return true
	}
	if s.Peek() != '"' {
		return false
	}
	raw, ok := s.Skip()
	if !ok {
		return false
	}
	body := raw[1 : len(raw)-1]
	dst.hi, dst.lo = 0, 0
	if c.alias {
		if bytes.IndexByte(body, '\\') < 0 {
			// AppendFragment would copy it unchanged.
			dst.b = body
			return true
		}
		// dst.b may alias the input (a repeated key): never append to it.
		dst.b, dst.lo, dst.hi, ok = jsonscan.AppendFragment(nil, body)
		return ok
	}
	dst.b, dst.lo, dst.hi, ok = jsonscan.AppendFragment(dst.b[:0], body)
	return ok
}

// finish reads a finish_reason, without allocating for the usual ones.
func (c *chatScanner) finish(dst *string) bool {
	if c.s.Null() {
		return true
	}
	v, ok := c.s.PlainString()
	if !ok {
		return false
	}
	switch string(v) {
	case "stop":
		*dst = "stop"
	case "length":
		*dst = "length"
	case "tool_calls":
		*dst = "tool_calls"
	case "content_filter":
		*dst = "content_filter"
	case "function_call":
		*dst = "function_call"
	default:
		*dst = string(v)
	}
	return true
}

// noExtra accepts only a null extra_content (which sets the pointer nil).
func (c *chatScanner) noExtra(dst **chatExtraContent) bool {
	if !c.s.Null() {
		return false
	}
	*dst = nil
	return true
}

// usage reads a usage object into u (zeroed by the caller).
func (c *chatScanner) usage(u *chatUsage) bool {
	s := &c.s
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return s.IntField(&u.PromptTokens)
		case "completion_tokens":
			return s.IntField(&u.CompletionTokens)
		case "total_tokens":
			return s.IntField(&u.TotalTokens)
		case "prompt_cache_hit_tokens":
			return s.IntField(&u.PromptCacheHitTokens)
		case "cached_tokens":
			return s.IntField(&u.CachedTokens)
		case "reasoning_tokens":
			return s.IntField(&u.ReasoningTokens)
		case "prompt_tokens_details":
			return scanInputDetails(s, &seen, 1, &u.PromptTokensDetails)
		case "completion_tokens_details":
			return scanOutputDetails(s, &seen, 2, &u.CompletionTokensDetails)
		}
		return s.SkipUnless(key, chatUsageFields)
	})
}

// usageField reads the "usage" value: null sets *dst nil; an object is
// read into store, zeroed first, and *dst points to it.
func (c *chatScanner) usageField(dst **chatUsage, store *chatUsage) bool {
	if c.s.Null() {
		*dst = nil
		return true
	}
	*store = chatUsage{}
	*dst = store
	return c.usage(store)
}

// completion scans a non-streamed body into st.w, reporting whether it
// did; on false st must not be used.
func (c *chatScanner) completion(data []byte, st *chatScanStore) bool {
	s := &c.s
	s.Reset(data)
	w := st.w
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.StrField(&w.ID)
		case "model":
			return s.StrField(&w.Model)
		case "choices":
			if !jsonscan.Once(&seen, 1) || s.Peek() != '[' {
				return false
			}
			return s.Array(func() bool {
				n := st.nChoices
				if n == len(st.choices) {
					return false
				}
				st.nChoices++
				return c.choice(&st.choices[n], st)
			})
		case "usage":
			if !jsonscan.Once(&seen, 2) {
				return false
			}
			if s.Null() {
				st.hasUsage = false
				return true
			}
			st.hasUsage = true
			return c.usage(st.usage)
		}
		return s.SkipUnless(key, chatTopFields)
	})
	return ok && s.End()
}

func (c *chatScanner) choice(ch *chatChoice, st *chatScanStore) bool {
	s := &c.s
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return s.IntField(&ch.Index)
		case "finish_reason":
			return c.finish(&ch.FinishReason)
		case "message":
			return jsonscan.Once(&seen, 1) && s.Peek() == '{' && c.message(&ch.Message, st)
		}
		return s.SkipUnless(key, chatChoiceFields)
	})
}

func (c *chatScanner) message(m *chatRespMsg, st *chatScanStore) bool {
	s := &c.s
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "content", "refusal", "reasoning_content", "reasoning":
			return c.str(m.field(key))
		case "extra_content":
			return c.noExtra(&m.ExtraContent)
		case "annotations":
			return c.noAnnotations(&m.Annotations)
		case "tool_calls":
			if s.Null() {
				st.nCalls = 0 // nil to encoding/json
				return true
			}
			if !jsonscan.Once(&seen, 1) || s.Peek() != '[' {
				return false
			}
			return s.Array(func() bool {
				n := st.nCalls
				if n == len(st.calls) {
					return false
				}
				st.nCalls++
				return c.respCall(&st.calls[n])
			})
		}
		return s.SkipUnless(key, chatMessageFields)
	})
}

func (c *chatScanner) respCall(tc *chatRespCall) bool {
	s := &c.s
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.StrField(&tc.ID)
		case "extra_content":
			return c.noExtra(&tc.ExtraContent)
		case "function":
			return jsonscan.Once(&seen, 1) && s.Peek() == '{' && c.function(&tc.Function)
		}
		return s.SkipUnless(key, chatRespCallFields)
	})
}

// chunk scans a stream chunk into h's chunk (reset by the caller, its
// buffers kept), and its id and model into h when head is set (h.ID and
// h.Model empty). usage is the storage for a usage object. On false the
// chunk must be reset again before other use.
func (c *chatScanner) chunk(data []byte, h *chatChunkHead, head bool, usage *chatUsage) bool {
	s := &c.s
	s.Reset(data)
	w := h.chatChunk
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "id", "model":
			if !head {
				_, ok := s.Skip()
				return ok
			}
			if string(key) == "id" {
				return s.StrField(&h.ID)
			}
			return s.StrField(&h.Model)
		case "choices":
			if !jsonscan.Once(&seen, 1) || s.Peek() != '[' {
				return false
			}
			return s.Array(func() bool {
				w.Choices = chatGrow(w.Choices)
				return c.chunkChoice(&w.Choices[len(w.Choices)-1])
			})
		case "usage":
			return jsonscan.Once(&seen, 2) && c.usageField(&w.Usage, usage)
		}
		return s.SkipUnless(key, chatTopFields)
	})
	return ok && s.End()
}

func (c *chatScanner) chunkChoice(ch *chatChunkChoice) bool {
	s := &c.s
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return s.IntField(&ch.Index)
		case "finish_reason":
			return c.finish(&ch.FinishReason)
		case "delta":
			return jsonscan.Once(&seen, 1) && s.Peek() == '{' && c.delta(&ch.Delta)
		}
		return s.SkipUnless(key, chatChunkFields)
	})
}

func (c *chatScanner) delta(d *chatDelta) bool {
	s := &c.s
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "content", "refusal", "reasoning_content", "reasoning":
			return c.str(d.field(key))
		case "annotations":
			return c.noAnnotations(&d.Annotations)
		case "tool_calls":
			if s.Null() {
				d.ToolCalls = d.ToolCalls[:0] // nil to encoding/json: the same to the decoder
				return true
			}
			if !jsonscan.Once(&seen, 1) || s.Peek() != '[' {
				return false
			}
			return s.Array(func() bool {
				d.ToolCalls = chatGrow(d.ToolCalls)
				return c.callDelta(&d.ToolCalls[len(d.ToolCalls)-1])
			})
		}
		return s.SkipUnless(key, chatDeltaFields)
	})
}

func (c *chatScanner) callDelta(tc *chatToolCallDelta) bool {
	s := &c.s
	var seen uint8
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			if s.Null() {
				tc.Index = chatOptInt{}
				return true
			}
			v, ok := s.Int()
			tc.Index = chatOptInt{v: v, set: ok}
			return ok
		case "id":
			return s.StrField(&tc.ID)
		case "extra_content":
			return c.noExtra(&tc.ExtraContent)
		case "function":
			return jsonscan.Once(&seen, 1) && s.Peek() == '{' && c.function(&tc.Function)
		}
		return s.SkipUnless(key, chatCallDeltaFields)
	})
}

// function reads a tool call's function object.
func (c *chatScanner) function(f *chatCallFunc) bool {
	s := &c.s
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return s.StrField(&f.Name)
		case "arguments":
			return c.str(&f.Arguments)
		}
		return s.SkipUnless(key, chatFuncFields)
	})
}

// chatGrow extends s by one element: the next one within its capacity
// (reset by chatChunk.reset, its buffers kept), or a new zero one.
func chatGrow[T any](s []T) []T {
	if n := len(s); n < cap(s) {
		return s[:n+1]
	}
	var zero T
	return append(s, zero)
}

// noAnnotations reads an annotations value that holds none ([] or null,
// kept as its bytes, as encoding/json keeps a RawMessage); citations are
// left to encoding/json.
func (c *chatScanner) noAnnotations(dst *json.RawMessage) bool {
	raw, ok := c.s.Skip()
	if !ok {
		return false
	}
	if t := bytes.TrimSpace(raw); !bytes.Equal(t, []byte("null")) && !(len(t) >= 2 && t[0] == '[' && len(bytes.TrimSpace(t[1:len(t)-1])) == 0) {
		return false
	}
	*dst = append((*dst)[:0], raw...)
	return true
}
