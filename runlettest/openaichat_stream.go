package runlettest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// chatChunkWriter builds chat.completion.chunk payloads in one reused buffer.
type chatChunkWriter struct {
	w      *sseWriter
	prefix []byte // {"id":...,"choices":[
	buf    []byte
	split  ChatSplit
}

// choice writes a chunk whose choice 0 has the given delta body (the JSON
// between the delta's braces) and finish reason ("" for null).
func (c *chatChunkWriter) choice(delta []byte, finish string) bool {
	b := append(c.buf[:0], c.prefix...)
	b = append(b, `{"index":0,"delta":{`...)
	b = append(b, delta...)
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = chatAppendString(b, finish, ChatSplitRunes)
	}
	b = append(b, "}]}"...)
	c.buf = b
	return c.w.event("", b)
}

func (s *OpenAIChatServer) stream(rw http.ResponseWriter, r *OpenAIChatReply, f *Fault, includeUsage bool, requestBytes int) {
	w := newSSEWriter(rw, f)
	cw := &chatChunkWriter{w: w, split: s.Split}
	p := append([]byte(nil), `{"id":`...)
	p = chatAppendString(p, r.ID, ChatSplitRunes)
	p = append(p, `,"object":"chat.completion.chunk","created":`...)
	p = strconv.AppendInt(p, chatFakeCreated, 10)
	p = append(p, `,"model":`...)
	p = chatAppendString(p, r.Model, ChatSplitRunes)
	p = append(p, `,"system_fingerprint":"fp_runlettest","choices":[`...)
	cw.prefix = p

	size := chunkSize(s.ChunkSize, 0)
	var delta []byte
	// sent counts events for ErrorAfter; an error is sent once that many
	// events went out (before the next one), or after the content.
	sent := 0
	send := func(ok bool) bool {
		if !ok {
			return false
		}
		sent++
		if r.Error != nil && sent >= r.ErrorAfter {
			chatFakeStreamError(w, r.Error)
			return false
		}
		return true
	}
	if r.Error != nil && r.ErrorAfter <= 0 {
		chatFakeStreamError(w, r.Error)
		return
	}
	role := `"role":"assistant","content":""`
	if r.Refusal != "" {
		role = `"role":"assistant","content":null,"refusal":""`
	}
	if !send(cw.choice([]byte(role), "")) {
		return
	}
	field := func(name, text string, n int) bool {
		for _, piece := range chatSplitText(text, size, n, s.Split) {
			delta = append(delta[:0], '"')
			delta = append(delta, name...)
			delta = append(delta, `":`...)
			delta = chatAppendString(delta, piece, s.Split)
			if !send(cw.choice(delta, "")) {
				return false
			}
		}
		return true
	}
	if !field(r.reasoningField(), r.Reasoning, 0) {
		return
	}
	if r.Refusal != "" {
		if !field("refusal", r.Refusal, 0) {
			return
		}
	} else if !field("content", r.Text, r.Deltas) {
		return
	}
	if !s.streamToolCalls(r, cw, size, send) {
		return
	}
	if !send(cw.choice(nil, r.finishReason())) {
		return
	}
	if includeUsage {
		u, _ := json.Marshal(r.usage(requestBytes))
		b := append(cw.buf[:0], cw.prefix...)
		b = append(b, `],"usage":`...)
		b = append(b, u...)
		b = append(b, '}')
		cw.buf = b
		if !send(w.event("", b)) {
			return
		}
	}
	if r.Error != nil {
		chatFakeStreamError(w, r.Error)
		return
	}
	w.event("", []byte("[DONE]"))
}

func (s *OpenAIChatServer) streamToolCalls(r *OpenAIChatReply, cw *chatChunkWriter, size int, send func(bool) bool) bool {
	if len(r.ToolCalls) == 0 {
		return true
	}
	type frag struct {
		call  int
		first bool
		args  string
	}
	perCall := make([][]frag, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		perCall[i] = append(perCall[i], frag{call: i, first: true})
		for _, piece := range chatSplitText(c.Arguments, size, 0, s.Split) {
			perCall[i] = append(perCall[i], frag{call: i, args: piece})
		}
	}
	var order []frag
	if s.InterleaveToolCalls {
		for k := 0; ; k++ {
			added := false
			for i := range perCall {
				if k < len(perCall[i]) {
					order = append(order, perCall[i][k])
					added = true
				}
			}
			if !added {
				break
			}
		}
	} else {
		for i := range perCall {
			order = append(order, perCall[i]...)
		}
	}
	var d []byte
	for _, f := range order {
		c := r.ToolCalls[f.call]
		d = append(d[:0], `"tool_calls":[{"index":`...)
		d = strconv.AppendInt(d, int64(f.call), 10)
		if f.first {
			d = append(d, `,"id":`...)
			d = chatAppendString(d, c.ID, ChatSplitRunes)
			d = append(d, `,"type":"function","function":{"name":`...)
			d = chatAppendString(d, c.Name, ChatSplitRunes)
			d = append(d, `,"arguments":""}}]`...)
		} else {
			d = append(d, `,"function":{"arguments":`...)
			d = chatAppendString(d, f.args, s.Split)
			d = append(d, `}}]`...)
		}
		if !send(cw.choice(d, "")) {
			return false
		}
	}
	return true
}

func chatFakeStreamError(w *sseWriter, e *OpenAIChatError) {
	var code any
	if e.Code != "" {
		code = e.Code
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": e.Message, "type": e.Type, "param": nil, "code": code,
	}})
	w.event("", b)
}

// chatSplitText cuts s into pieces of size units of split, or into exactly
// n pieces when n > 0 (fewer if s is shorter).
func chatSplitText(s string, size, n int, split ChatSplit) []string {
	if s == "" {
		return nil
	}
	if split == ChatSplitUTF16 {
		return chatSplitUTF16(s, size, n)
	}
	var units []int // byte offset where each unit starts
	if split == ChatSplitBytes {
		units = make([]int, len(s))
		for i := range units {
			units[i] = i
		}
	} else {
		for i := range s {
			units = append(units, i)
		}
	}
	total := len(units)
	if size <= 0 {
		size = total
	}
	if n > 0 {
		size = (total + n - 1) / n
		if size == 0 {
			size = 1
		}
	}
	var out []string
	for k := 0; k < total; k += size {
		end := len(s)
		if k+size < total {
			end = units[k+size]
		}
		out = append(out, s[units[k]:end])
	}
	return out
}

// chatSplitUTF16 cuts s between UTF-16 code units. A piece that ends or
// starts inside a surrogate pair is marked by a sentinel prefix/suffix that
// chatAppendString turns into the lone \u escape.
func chatSplitUTF16(s string, size, n int) []string {
	units := utf16.Encode([]rune(s))
	if size <= 0 {
		size = len(units)
	}
	if n > 0 {
		size = max(1, (len(units)+n-1)/n)
	}
	var out []string
	for k := 0; k < len(units); k += size {
		end := min(k+size, len(units))
		out = append(out, chatUTF16Piece(units[k:end]))
	}
	return out
}

// chatUTF16Piece encodes UTF-16 units as a string; a lone surrogate is kept
// as the private marker chatLoneSurrogate followed by its 4 hex digits.
func chatUTF16Piece(units []uint16) string {
	var b strings.Builder
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case utf16.IsSurrogate(rune(u)) && i+1 < len(units) && u < 0xDC00 && units[i+1] >= 0xDC00 && units[i+1] < 0xE000:
			b.WriteRune(utf16.DecodeRune(rune(u), rune(units[i+1])))
			i++
		case utf16.IsSurrogate(rune(u)):
			b.WriteByte(chatLoneSurrogate)
			const hex = "0123456789abcdef"
			b.WriteByte(hex[u>>12])
			b.WriteByte(hex[u>>8&15])
			b.WriteByte(hex[u>>4&15])
			b.WriteByte(hex[u&15])
		default:
			b.WriteRune(rune(u))
		}
	}
	return b.String()
}

// chatLoneSurrogate marks a lone surrogate in a ChatSplitUTF16 piece. It is
// an invalid UTF-8 byte, so it never occurs in text.
const chatLoneSurrogate = 0xFF

// chatAppendString appends s as a JSON string. Bytes of invalid UTF-8 are
// written raw (ChatSplitBytes relies on it); with ChatSplitUTF16 every
// non-ASCII character is a \u escape.
func chatAppendString(b []byte, s string, split ChatSplit) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			if split != ChatSplitUTF16 {
				i++ // raw bytes, valid or not
				continue
			}
			b = append(b, s[start:i]...)
			if c == chatLoneSurrogate && i+4 < len(s) {
				b = append(b, `\u`...)
				b = append(b, s[i+1:i+5]...)
				i += 5
				start = i
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			units := []rune{r}
			if r >= 0x10000 {
				r1, r2 := utf16.EncodeRune(r)
				units = []rune{r1, r2}
			}
			for _, u := range units {
				b = append(b, '\\', 'u', hex[u>>12&15], hex[u>>8&15], hex[u>>4&15], hex[u&15])
			}
			i += size
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
