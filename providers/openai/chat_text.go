package openai

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/runlet/runlet/internal/jsonscan"
)

// chatStr is a JSON string field of a stream chunk (content, reasoning,
// tool-call arguments), decoded into a reused buffer.
//
// Unlike encoding/json it keeps invalid UTF-8 bytes as they are, because a
// server may split a multi-byte character between two chunks and only the
// joined fragments are valid; and it holds back a UTF-16 surrogate escape
// left alone at either end of the string (hi, lo), so chatCarry can join a
// surrogate pair split between chunks. A value that is not a string (an
// object sent as tool arguments by a loose server) is kept as raw JSON.
type chatStr struct {
	b  []byte
	hi rune // lone high surrogate that ended the string, not in b
	lo rune // lone low surrogate that began the string, not in b
}

func (s *chatStr) reset() { s.b, s.hi, s.lo = s.b[:0], 0, 0 }

// empty reports whether the field carried nothing.
func (s *chatStr) empty() bool { return len(s.b) == 0 && s.hi == 0 && s.lo == 0 }

var errChatBadString = errors.New("invalid JSON string")

// UnmarshalJSON implements json.Unmarshaler.
func (s *chatStr) UnmarshalJSON(data []byte) error {
	s.reset()
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	if data[0] != '"' {
		s.b = append(s.b, data...)
		return nil
	}
	if len(data) < 2 || data[len(data)-1] != '"' {
		return errChatBadString
	}
	var ok bool
	if s.b, s.lo, s.hi, ok = jsonscan.AppendFragment(s.b, data[1:len(data)-1]); !ok {
		return errChatBadString
	}
	return nil
}

// chatCarry joins one target's fragments (content, reasoning, one call's
// arguments) across chunks: it completes a surrogate pair whose halves came
// in different chunks.
type chatCarry struct{ hi rune }

// text returns the bytes s contributes, using scratch when it must prepend
// a character carried over from the previous fragment.
func (c *chatCarry) text(s *chatStr, scratch *[]byte) []byte {
	if s.empty() {
		return nil
	}
	if c.hi == 0 && s.lo == 0 {
		c.hi = s.hi
		return s.b
	}
	buf := (*scratch)[:0]
	switch {
	case c.hi != 0 && s.lo != 0:
		buf = utf8.AppendRune(buf, utf16.DecodeRune(c.hi, s.lo))
	case c.hi != 0:
		buf = utf8.AppendRune(buf, utf8.RuneError)
	default:
		buf = utf8.AppendRune(buf, utf8.RuneError)
	}
	buf = append(buf, s.b...)
	c.hi = s.hi
	*scratch = buf
	return buf
}

// flush returns what is left at the end of the stream: an unpaired high
// surrogate becomes U+FFFD, as encoding/json would decode it.
func (c *chatCarry) flush() string {
	if c.hi == 0 {
		return ""
	}
	c.hi = 0
	return string(utf8.RuneError)
}

// chatOptInt is an optional JSON integer: set is false when the field is
// absent or null. It decodes without allocating.
type chatOptInt struct {
	v   int
	set bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (o *chatOptInt) UnmarshalJSON(data []byte) error {
	o.v, o.set = 0, false
	if string(data) == "null" {
		return nil
	}
	n, ok := jsonscan.Int(data)
	if !ok {
		return errors.New("invalid tool call index")
	}
	o.v, o.set = n, true
	return nil
}

// chatThink splits reasoning written inline as "<think>…</think>" at the
// start of the content from the answer that follows. Feed it content
// fragments in order; tags split across fragments are recognised.
type chatThink struct {
	state uint8
	pend  []byte // held-back bytes that may be part of a tag
}

const (
	chatThinkStart     = iota // before any content: a "<think>" may open
	chatThinkOpenSkip         // just after "<think>": skipping whitespace
	chatThinkIn               // inside the think block
	chatThinkCloseSkip        // just after "</think>": skipping whitespace
	chatThinkOut              // plain content
)

const (
	chatThinkOpen  = "<think>"
	chatThinkClose = "</think>"
)

// feed splits one fragment, calling emit with reasoning (true) or text
// (false) pieces. Pieces are only valid during the call.
func (t *chatThink) feed(frag []byte, emit func(reasoning bool, piece []byte)) {
	if t.state == chatThinkOut {
		emit(false, frag)
		return
	}
	data := frag
	if len(t.pend) > 0 {
		t.pend = append(t.pend, frag...)
		data = t.pend
	}
	for len(data) > 0 {
		switch t.state {
		case chatThinkStart:
			rest := bytes.TrimLeft(data, " \t\r\n")
			switch {
			case len(rest) == 0 || bytes.HasPrefix([]byte(chatThinkOpen), rest):
				t.keep(data) // whitespace or a partial "<think>": wait
				return
			case bytes.HasPrefix(rest, []byte(chatThinkOpen)):
				t.state = chatThinkOpenSkip
				data = rest[len(chatThinkOpen):]
			default:
				t.state = chatThinkOut
				emit(false, data)
				t.pend = t.pend[:0]
				return
			}
		case chatThinkOpenSkip, chatThinkCloseSkip:
			data = bytes.TrimLeft(data, " \t\r\n")
			if len(data) > 0 {
				if t.state == chatThinkOpenSkip {
					t.state = chatThinkIn
				} else {
					t.state = chatThinkOut
				}
			}
		case chatThinkIn:
			if i := bytes.Index(data, []byte(chatThinkClose)); i >= 0 {
				if i > 0 {
					emit(true, data[:i])
				}
				data = data[i+len(chatThinkClose):]
				t.state = chatThinkCloseSkip
				continue
			}
			// Hold back a suffix that may begin "</think>".
			keep := 0
			for k := min(len(chatThinkClose)-1, len(data)); k > 0; k-- {
				if bytes.HasSuffix(data, []byte(chatThinkClose[:k])) {
					keep = k
					break
				}
			}
			if n := len(data) - keep; n > 0 {
				emit(true, data[:n])
			}
			t.keep(data[len(data)-keep:])
			return
		case chatThinkOut:
			emit(false, data)
			t.pend = t.pend[:0]
			return
		}
	}
	t.pend = t.pend[:0]
}

// keep saves b (which may alias t.pend) as the pending bytes.
func (t *chatThink) keep(b []byte) {
	t.pend = append(t.pend[:0], b...)
}

// flush emits what is held back at the end of the content: an unclosed
// think block is reasoning; anything that only looked like a tag's start
// is text.
func (t *chatThink) flush(emit func(reasoning bool, piece []byte)) {
	if len(t.pend) > 0 {
		switch t.state {
		case chatThinkStart:
			emit(false, t.pend)
		case chatThinkIn:
			emit(true, t.pend)
		}
	}
	t.pend = t.pend[:0]
}
