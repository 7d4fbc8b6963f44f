package httpc

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/sse"
)

// DefaultMaxResponseBytes is the size limit of one response when an
// adapter's Config sets none: 64 MiB of text, reasoning and tool
// arguments, far beyond any real answer, well short of exhausting memory.
const DefaultMaxResponseBytes = 64 << 20

// Budget counts the bytes one response accumulates (text, reasoning, tool
// names and arguments, and PartOverhead per part) against a limit, so a server that streams without
// end cannot grow the process until it dies. The zero Budget has the
// default limit.
type Budget struct {
	Provider string
	// Max is the limit in bytes; zero or negative means
	// DefaultMaxResponseBytes.
	Max  int64
	used int64
}

// PartOverhead is what a response is charged for each of its parts
// besides their bytes: each text, reasoning or tool-call part of the
// message, and each object of a response's JSON at the depth of its
// parts (content blocks, output items, tool calls), whatever it holds. A
// part costs a few hundred bytes of heap however small it is (about 650
// for a tool call with a one-byte name), so a response of many tiny parts,
// charged their bytes alone, could grow the heap to hundreds of times
// MaxResponseBytes. Charged this, a response costs at most a few times
// its limit: the 64 MiB default allows 131,072 parts, far beyond any real
// answer.
const PartOverhead = 512

// NewBudget returns a Budget of max bytes (zero or negative: the default).
func NewBudget(provider string, max int64) Budget {
	return Budget{Provider: provider, Max: max}
}

// Limit is the effective limit.
func (b Budget) Limit() int64 {
	if b.Max <= 0 {
		return DefaultMaxResponseBytes
	}
	return b.Max
}

// Add counts n more bytes and returns Err.
func (b *Budget) Add(n int) error {
	b.used += int64(n)
	return b.Err()
}

// AddParts counts n more parts (PartOverhead each) and returns Err.
func (b *Budget) AddParts(n int) error { return b.Add(n * PartOverhead) }

// CheckObjects returns a *runlet.ProviderError wrapping
// runlet.ErrResponseTooLarge (else nil) when
// the objects of the JSON document data down to depth (see CountObjects),
// PartOverhead each, would take the response past its limit; call it
// before decoding a large document (a stream event of more than
// BigEvent bytes), so that decoding it costs no more than what it may
// hold. It counts nothing: what the document holds is counted as it is
// assembled.
func (b *Budget) CheckObjects(data []byte, depth int) *runlet.ProviderError {
	if len(data) <= BigEvent {
		return nil
	}
	if n := CountObjects(data, depth); b.used+int64(n)*PartOverhead > b.Limit() {
		return b.tooLarge("too many parts")
	}
	return nil
}

// BigEvent is the size from which CheckObjects counts a stream event's
// objects: a smaller one holds too few to matter.
const BigEvent = 4 << 10

// CountObjects returns the number of JSON objects in data that are nested
// in at most depth containers (objects and arrays) besides their own: 0
// counts the top-level object only, 2 also the objects of its arrays'
// elements, and so on. It does not validate data; braces in strings do
// not count.
func CountObjects(data []byte, depth int) int {
	n, level, inString, escaped := 0, 0, false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{':
			if level <= depth {
				n++
			}
			level++
		case c == '[':
			level++
		case c == '}' || c == ']':
			level--
		}
	}
	return n
}

// CheckBody returns a *runlet.ProviderError wrapping
// runlet.ErrResponseTooLarge when a non-streamed body holds more parts
// than its limit allows: the objects down to depth (the depth of the
// parts in the API's response, see CountObjects), PartOverhead each,
// past limit (zero or negative: the default). Adapters call it before
// decoding the body, so that a body of many tiny parts is refused before
// it costs many times its size in heap.
func (c *Client) CheckBody(resp *http.Response, body []byte, depth int, limit int64) error {
	b := NewBudget(c.Provider, limit)
	if int64(CountObjects(body, depth))*PartOverhead <= b.Limit() {
		return nil
	}
	e := b.tooLarge("too many parts")
	e.StatusCode, e.RequestID = resp.StatusCode, RequestID(resp.Header)
	return e
}

// Err is nil until the response went past the limit, then a
// *runlet.ProviderError wrapping runlet.ErrResponseTooLarge (not
// retryable: the same request would grow as large again).
func (b *Budget) Err() error {
	if b.used <= b.Limit() {
		return nil
	}
	return b.tooLarge("")
}

func (b *Budget) tooLarge(why string) *runlet.ProviderError {
	if why != "" {
		why += ": "
	}
	return &runlet.ProviderError{Provider: b.Provider,
		Message: why + "response larger than " + strconv.FormatInt(b.Limit(), 10) + " bytes (text, reasoning and tool arguments, " +
			strconv.Itoa(PartOverhead) + " per part); raise the adapter's Config.MaxResponseBytes",
		Err: runlet.ErrResponseTooLarge}
}

// NewSSEReader returns an SSE reader on a streaming response's body whose
// events may hold at most limit bytes (the adapter's MaxResponseBytes,
// resolved, see Budget), so a stream that never ends its event, plain or
// gzipped, costs about the limit in memory before it is refused. Map the
// reader's sse.ErrEventTooLarge with EventTooLarge.
func NewSSEReader(body io.Reader, limit int64) *sse.Reader {
	r := sse.NewReader(body)
	r.SetMaxEventSize(int(min(limit, math.MaxInt32)))
	return r
}

// EventTooLarge is the error of a stream whose event went past limit
// (sse.ErrEventTooLarge): final, a *runlet.ProviderError wrapping
// runlet.ErrResponseTooLarge.
func EventTooLarge(provider, requestID string, limit int64, err error) *runlet.ProviderError {
	return &runlet.ProviderError{Provider: provider, RequestID: requestID,
		Message: "stream event larger than " + strconv.FormatInt(limit, 10) + " bytes; raise the adapter's Config.MaxResponseBytes",
		Err:     fmt.Errorf("%w: %w", runlet.ErrResponseTooLarge, err)}
}
