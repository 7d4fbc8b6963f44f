package runlettest

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// WireRequest is one HTTP request a fake wire server received.
type WireRequest struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// JSON decodes the request body into a generic map (nil if it is not a JSON object).
func (r WireRequest) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Fault is a failure a fake wire server injects into one response.
type Fault struct {
	// Status, when non-zero, answers with this HTTP status, Header and Body
	// instead of the scripted response.
	Status int
	Header http.Header
	Body   string
	// Reset closes the connection abruptly after AfterEvents stream events
	// (for a non-streaming response: before any body byte).
	Reset bool
	// Truncate ends the stream cleanly after AfterEvents events, without
	// the protocol's terminal event.
	Truncate bool
	// Stall keeps a stream open after AfterEvents events, sending nothing
	// more, until the client goes away: for tests of cancellation and of
	// a consumer that stops early. It applies to streams only.
	Stall       bool
	AfterEvents int

	// clientGone is the request's context's Done channel, for Stall.
	clientGone <-chan struct{}
}

// wire is the part every fake wire server shares: request recording and a
// queue of faults, consumed one per request.
type wire struct {
	mu       sync.Mutex
	requests []WireRequest
	faults   []Fault
}

// Requests returns a copy of the requests received so far.
func (w *wire) Requests() []WireRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]WireRequest(nil), w.requests...)
}

// InjectFault queues faults; each applies to one subsequent request, in order.
func (w *wire) InjectFault(f ...Fault) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.faults = append(w.faults, f...)
}

// record stores the request and returns the fault for it, if any.
func (w *wire) record(r *http.Request) (WireRequest, *Fault) {
	body, _ := io.ReadAll(r.Body)
	req := WireRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests = append(w.requests, req)
	if len(w.faults) == 0 {
		return req, nil
	}
	f := w.faults[0]
	w.faults = w.faults[1:]
	f.clientGone = r.Context().Done()
	return req, &f
}

// writeStatusFault answers with the fault's status; it reports whether it did.
func writeStatusFault(rw http.ResponseWriter, f *Fault) bool {
	if f == nil || f.Status == 0 {
		return false
	}
	for k, v := range f.Header {
		rw.Header()[k] = v
	}
	rw.WriteHeader(f.Status)
	_, _ = io.WriteString(rw, f.Body)
	return true
}

// writeVerbatim sends a scripted Body as is: as an event stream when the
// request streams, else as JSON.
func writeVerbatim(rw http.ResponseWriter, body []byte, stream bool) {
	if stream {
		rw.Header().Set("Content-Type", "text/event-stream")
	} else {
		rw.Header().Set("Content-Type", "application/json")
	}
	_, _ = rw.Write(body)
}

// resetConn closes the underlying connection without a proper HTTP ending.
// It does not flush first: events already written were flushed one by one,
// and a reset before any body byte must not send a status line either.
func resetConn(rw http.ResponseWriter) {
	if hj, ok := rw.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// sseWriter writes server-sent events, flushing after each one.
type sseWriter struct {
	rw      http.ResponseWriter
	fl      http.Flusher
	events  int
	fault   *Fault
	stopped bool
}

func newSSEWriter(rw http.ResponseWriter, f *Fault) *sseWriter {
	rw.Header().Set("Content-Type", "text/event-stream")
	rw.Header().Set("Cache-Control", "no-cache")
	rw.WriteHeader(http.StatusOK)
	fl, _ := rw.(http.Flusher)
	if fl != nil {
		fl.Flush() // a streaming server sends its status line at once
	}
	return &sseWriter{rw: rw, fl: fl, fault: f}
}

// event writes one event ("event:" line only when name is non-empty). After
// the fault's AfterEvents events it resets, truncates or stalls until the
// client goes away, and reports false; callers stop writing then.
func (s *sseWriter) event(name string, data []byte) bool {
	if s.stopped {
		return false
	}
	if f := s.fault; f != nil && (f.Reset || f.Truncate || f.Stall) && s.events >= f.AfterEvents {
		s.stopped = true
		switch {
		case f.Reset:
			resetConn(s.rw)
		case f.Stall && f.clientGone != nil:
			<-f.clientGone
		}
		return false
	}
	buf := make([]byte, 0, len(data)+len(name)+16)
	if name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	_, _ = s.rw.Write(buf)
	if s.fl != nil {
		s.fl.Flush()
	}
	s.events++
	return true
}

// chunks splits s into pieces of at most n runes (n <= 0: one piece); see
// chunkSize for n.
func chunks(s string, n int) []string {
	if n <= 0 || s == "" {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

// script decides a fake server's answers: scripted answers in order, then
// an optional responder. It also holds the API key the server requires.
// Every fake wire server embeds one, so they all script the same way.
//
// A new fake server embeds wire (recording, faults) and script[T] of its
// own reply type T, sets fromReply to render a provider-neutral WireReply
// as a T, and so gets Enqueue-style scripting, EnqueueReplies,
// SetReplyResponder and RequireAPIKey for free; its handler calls record,
// writeStatusFault, requiredKey and next, and streams with newSSEWriter.
type script[T any] struct {
	smu       sync.Mutex
	queue     []T
	responder func(WireRequest) T
	apiKey    string
	n         int // requests answered
	// fromReply renders a provider-neutral reply in the server's terms.
	fromReply func(WireReply) T
}

// EnqueueReplies appends provider-neutral replies to the script.
func (s *script[T]) EnqueueReplies(replies ...WireReply) {
	out := make([]T, len(replies))
	for i, r := range replies {
		out[i] = s.fromReply(r)
	}
	s.enqueue(out)
}

// SetReplyResponder sets a function that answers, in provider-neutral
// terms, the requests that come once the scripted replies are used up.
func (s *script[T]) SetReplyResponder(f func(WireRequest) WireReply) {
	s.setResponder(func(r WireRequest) T { return s.fromReply(f(r)) })
}

func (s *script[T]) enqueue(answers []T) {
	s.smu.Lock()
	defer s.smu.Unlock()
	s.queue = append(s.queue, answers...)
}

func (s *script[T]) setResponder(f func(WireRequest) T) {
	s.smu.Lock()
	defer s.smu.Unlock()
	s.responder = f
}

// RequireAPIKey makes the server answer 401 unless the request carries key
// the way the provider expects it (a bearer token, or x-api-key).
func (s *script[T]) RequireAPIKey(key string) {
	s.smu.Lock()
	defer s.smu.Unlock()
	s.apiKey = key
}

// next returns the answer for a request and the request's number (from 1);
// ok is false when there is none.
func (s *script[T]) next(req WireRequest) (answer T, n int, ok bool) {
	s.smu.Lock()
	s.n++
	n = s.n
	if len(s.queue) > 0 {
		answer = s.queue[0]
		s.queue = s.queue[1:]
		s.smu.Unlock()
		return answer, n, true
	}
	f := s.responder
	s.smu.Unlock()
	if f == nil {
		return answer, n, false
	}
	return f(req), n, true
}

// requiredKey returns the key set by RequireAPIKey ("" for none).
func (s *script[T]) requiredKey() string {
	s.smu.Lock()
	defer s.smu.Unlock()
	return s.apiKey
}
