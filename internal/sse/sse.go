// Package sse reads Server-Sent Events (text/event-stream) as the model
// providers send them. It is shared by every adapter.
//
// The reader follows the WHATWG event-stream rules that matter on the wire:
// LF, CRLF and CR line endings; multi-line data (joined with "\n"); comment
// and keep-alive lines; event and id fields; one optional space after the
// colon. It also dispatches a final event that lacks the closing blank line,
// because real servers end streams that way, and it handles lines of any
// length up to a configurable event size limit.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxEventSize bounds one event's data, so a broken or hostile server
// cannot make the reader buffer without limit.
const DefaultMaxEventSize = 32 << 20

// ErrEventTooLarge is returned when one event's data exceeds the limit.
var ErrEventTooLarge = errors.New("sse: event exceeds size limit")

// errReleased is what Next returns after Release.
var errReleased = errors.New("sse: reader released")

// bufSize is the read buffer of a Reader: a few events' worth. Longer lines
// are assembled in a buffer that grows as far as the event size limit, so
// a stream of small events holds 4 KiB, not the size of its largest event.
const bufSize = 4 << 10

// maxPooled bounds the data and line buffers a Reader gives back to the
// pool: a stream that once carried a huge event does not pin it.
const maxPooled = 64 << 10

// buffers are what a Reader allocates, pooled across streams: at thousands
// of concurrent streams and one stream per model call, the buffers are most
// of what reading costs.
type buffers struct {
	br         *bufio.Reader
	data, line []byte
	parts      [][]byte          // emptied
	types      map[string]string // interned event types; bounded by intern
}

var pool = sync.Pool{New: func() any { return &buffers{br: bufio.NewReaderSize(nil, bufSize)} }}

// Event is one dispatched event. Data is only valid until the next call to
// Next; copy it to keep it.
type Event struct {
	Type string // the event field; empty when the server sent none
	Data []byte
	ID   string
}

// Reader reads events from an event stream.
type Reader struct {
	bufs    *buffers // nil once released
	br      *bufio.Reader
	data    []byte
	line    []byte   // assembly buffer for lines longer than the bufio buffer
	parts   [][]byte // a long line's bytes so far, in chunks filled, never regrown
	partLen int      // bytes in parts
	typ     string
	id      string
	hasData bool
	max     int
	skipLF  bool // the last line ended with CR: drop an LF that follows
	types   map[string]string
	err     error
}

// NewReader returns a Reader on r. Its buffers come from a pool: call
// Release when done with it (a Reader that reached the end of its stream or
// an error has already released them).
func NewReader(r io.Reader) *Reader {
	b := pool.Get().(*buffers)
	b.br.Reset(r)
	return &Reader{bufs: b, br: b.br, data: b.data[:0], line: b.line[:0], parts: b.parts, types: b.types, max: DefaultMaxEventSize}
}

// Release gives the Reader's buffers back to the pool. The last event's
// Data is invalid after it, and Next returns an error. Release is
// idempotent.
func (r *Reader) Release() {
	b := r.bufs
	if b == nil {
		return
	}
	r.bufs, r.br = nil, nil
	if r.err == nil {
		r.err = errReleased
	}
	b.br.Reset(nil) // drop the reference to the stream
	clear(r.parts[:cap(r.parts)])
	b.data, b.line, b.types, b.parts = keep(r.data), keep(r.line), r.types, r.parts[:0]
	r.data, r.line, r.types, r.parts = nil, nil, nil, nil
	pool.Put(b)
}

func keep(b []byte) []byte {
	if cap(b) > maxPooled {
		return nil
	}
	return b[:0]
}

// SetMaxEventSize changes the per-event data limit.
func (r *Reader) SetMaxEventSize(n int) { r.max = n }

// Next returns the next event. It returns io.EOF after the last event and
// io.ErrUnexpectedEOF never: an event cut off without its blank line is
// still dispatched, and the caller decides whether the stream was complete
// (a provider knows its own terminal event).
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		r.Release() // the previous event, if any, is no longer valid
		return Event{}, r.err
	}
	r.data = r.data[:0]
	r.hasData, r.typ = false, ""
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && r.hasData {
				r.err = io.EOF
				return r.event(), nil
			}
			r.err = err
			r.Release()
			return Event{}, err
		}
		if len(line) == 0 {
			if r.hasData {
				return r.event(), nil
			}
			r.typ = ""
			continue
		}
		if line[0] == ':' {
			continue // comment or keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if r.hasData {
				r.data = appendBounded(r.data, newline, r.max)
			}
			if len(r.data)+len(value) > r.max {
				r.err = ErrEventTooLarge
				r.Release()
				return Event{}, r.err
			}
			r.data = appendBounded(r.data, value, r.max)
			r.hasData = true
		case "event":
			r.typ = r.intern(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.id = string(value)
			}
		}
	}
}

func (r *Reader) event() Event {
	return Event{Type: r.typ, Data: r.data, ID: r.id}
}

// intern returns event type names without allocating for names seen before.
func (r *Reader) intern(b []byte) string {
	if s, ok := r.types[string(b)]; ok {
		return s
	}
	if r.types == nil {
		r.types = make(map[string]string)
	}
	if len(r.types) > 256 {
		return string(b)
	}
	s := string(b)
	r.types[s] = s
	return s
}

// readLine returns the next line without its terminator (LF, CRLF or a
// lone CR). The slice is valid until the next call.
//
// It looks for either terminator in the buffered bytes rather than waiting
// for an LF, so a stream that ends its lines with CR alone is read line by
// line as it arrives (not held until the buffer fills or EOF, and not
// mistaken for one huge line). A CR that ends the buffered bytes may be the first half
// of a CRLF; skipLF drops the LF if it comes next.
func (r *Reader) readLine() ([]byte, error) {
	r.parts, r.partLen = r.parts[:0], 0
	want := 1 // bytes to have buffered before looking again
	for {
		_, err := r.br.Peek(want) // blocks until want bytes, or an error
		buf, _ := r.br.Peek(r.br.Buffered())
		if len(buf) == 0 {
			switch {
			case err == io.EOF && r.partLen > 0:
				return r.join(nil), nil // a final line without terminator
			case err == io.EOF:
				return nil, io.EOF
			}
			return nil, fmt.Errorf("sse: %w", err)
		}
		if r.skipLF {
			r.skipLF = false
			if buf[0] == '\n' {
				_, _ = r.br.Discard(1)
				continue
			}
		}
		end := bytes.IndexByte(buf, '\n')
		seg := buf
		if end >= 0 {
			seg = buf[:end]
		}
		if cr := bytes.IndexByte(seg, '\r'); cr >= 0 {
			end = cr
		}
		if end < 0 {
			if err == nil && len(buf) < r.br.Size() {
				want = len(buf) + 1 // wait for more, in place
				continue
			}
			// The line fills the buffer, or the stream ended: set the bytes
			// aside and read on.
			if r.partLen+len(buf) > r.max {
				return nil, ErrEventTooLarge
			}
			r.keep(buf)
			_, _ = r.br.Discard(len(buf))
			want = 1
			continue
		}
		r.skipLF = buf[end] == '\r'
		line := buf[:end] // Discard does not overwrite the buffer
		if r.partLen > 0 {
			if r.partLen+len(line) > r.max {
				return nil, ErrEventTooLarge
			}
			line = r.join(line)
		}
		_, _ = r.br.Discard(end + 1)
		return line, nil
	}
}

// keep sets b aside as part of a long line. The chunks it goes into double
// in size (up to 1 MiB) and are never regrown, so a line that runs past
// the event size limit has cost about the limit, not a multiple of it.
func (r *Reader) keep(b []byte) {
	for len(b) > 0 {
		n := len(r.parts)
		switch {
		case n == 0 && cap(r.line) > 0:
			// The line buffer (pooled) is the first chunk; join copies it
			// onto itself.
			r.parts = append(r.parts, r.line[:0])
			n++
		case n == 0 || len(r.parts[n-1]) == cap(r.parts[n-1]):
			size := 2 * bufSize
			if n > 0 {
				size = min(2*cap(r.parts[n-1]), 1<<20)
			}
			size = max(min(size, r.max-r.partLen), len(b), 1)
			r.parts = append(r.parts, make([]byte, 0, size))
			n++
		}
		last := &r.parts[n-1]
		k := copy((*last)[len(*last):cap(*last)], b)
		*last = (*last)[:len(*last)+k]
		r.partLen += k
		b = b[k:]
	}
}

// join returns the long line set aside, followed by tail, in the line
// buffer, and empties the parts.
func (r *Reader) join(tail []byte) []byte {
	n := r.partLen + len(tail)
	if cap(r.line) < n {
		r.line = make([]byte, 0, n)
	}
	r.line = r.line[:0]
	for _, p := range r.parts {
		r.line = append(r.line, p...)
	}
	r.line = append(r.line, tail...)
	clear(r.parts)
	r.parts, r.partLen = r.parts[:0], 0
	return r.line
}

// appendBounded appends b to data, doubling its capacity when it must grow
// but never past limit (the caller checked that data and b fit): append's
// own growth of 1.25x at large sizes would allocate several times the
// limit over an event that reaches it.
func appendBounded(data, b []byte, limit int) []byte {
	if n := len(data) + len(b); n > cap(data) {
		grown := make([]byte, len(data), min(max(2*cap(data), n, 512), max(limit, n)))
		copy(grown, data)
		data = grown
	}
	return append(data, b...)
}

var newline = []byte{'\n'}
