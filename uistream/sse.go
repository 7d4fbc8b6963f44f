package uistream

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/wirejson"
)

// frameWriter writes server-sent events to one response. Frames collect
// in a small buffer and go out at flush, once per run event, each write
// bounded by the write timeout: a client that stops reading blocks the
// run (which holds one event at a time, so memory does not grow) until
// the timeout fails the write and the handler cancels the run.
//
// Writes come from the run's goroutine and from keepAlive's: both hold mu
// while they write, the run's for a whole event and its flush, so a
// keep-alive comment never lands inside a frame.
type frameWriter struct {
	mu      sync.Mutex
	flushed time.Time // when something was last sent; keepAlive waits from it
	scratch []byte    // a frame built by hand (see deltaFrame)
	rc      *http.ResponseController
	buf     *bufio.Writer
	timeout time.Duration
	err     error // the first write error; every later call returns it

	deadlineSet time.Time // when the write deadline was last moved
	noDeadline  bool      // the ResponseWriter has no deadlines
}

// deadlineWriter is the response, each write under a fresh deadline.
type deadlineWriter struct {
	w  http.ResponseWriter
	fw *frameWriter
}

func (d deadlineWriter) Write(p []byte) (int, error) {
	d.fw.extendDeadline()
	return d.w.Write(p)
}

// extendDeadline moves the write deadline to a timeout from now. Setting
// it costs a timer update, so it moves only once an eighth of the timeout
// went by: a write may wait between 7/8 of the timeout and all of it.
func (fw *frameWriter) extendDeadline() {
	if fw.timeout <= 0 || fw.noDeadline {
		return
	}
	now := time.Now()
	if now.Sub(fw.deadlineSet) < fw.timeout/8 {
		return
	}
	if err := fw.rc.SetWriteDeadline(now.Add(fw.timeout)); err != nil {
		// A ResponseWriter without deadlines (a test's) writes unbounded.
		fw.noDeadline = true
		return
	}
	fw.deadlineSet = now
}

func newFrameWriter(w http.ResponseWriter, timeout time.Duration) *frameWriter {
	fw := &frameWriter{rc: http.NewResponseController(w), timeout: timeout, flushed: time.Now()}
	fw.buf = bufio.NewWriterSize(deadlineWriter{w: w, fw: fw}, 4<<10)
	return fw
}

// setSSEHeaders sets the headers of a server-sent event stream that no
// cache or buffering proxy (nginx's X-Accel-Buffering) holds back.
func setSSEHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
}

// data writes one "data:" event holding v as JSON. encoding/json escapes
// line breaks inside strings, so the JSON is one line, as SSE needs.
func (fw *frameWriter) data(v any) error {
	if fw.err != nil {
		return fw.err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err // a bug in an encoder, not the client's fault
	}
	return fw.raw("data: ", b)
}

// deltaFrame writes {"type":typ,idKey:id,deltaKey:delta} as one data
// event, built without encoding/json: the stream's most frequent frames
// (text, reasoning and tool-input deltas) cost no reflection.
func (fw *frameWriter) deltaFrame(typ, idKey, id, deltaKey, delta string) error {
	if fw.err != nil {
		return fw.err
	}
	b := append(fw.scratch[:0], `{"type":`...)
	b = wirejson.AppendString(b, typ)
	b = append(b, ',', '"')
	b = append(b, idKey...)
	b = append(b, '"', ':')
	b = wirejson.AppendString(b, id)
	b = append(b, ',', '"')
	b = append(b, deltaKey...)
	b = append(b, '"', ':')
	b = wirejson.AppendString(b, delta)
	b = append(b, '}')
	fw.scratch = b
	return fw.raw("data: ", b)
}

// raw writes prefix, payload (one line) and the blank line ending an event.
func (fw *frameWriter) raw(prefix string, payload []byte) error {
	fw.buf.WriteString(prefix)
	fw.buf.Write(payload)
	if _, err := fw.buf.WriteString("\n\n"); err != nil {
		fw.err = err
	}
	return fw.err
}

// flush sends what is buffered to the client.
func (fw *frameWriter) flush() error {
	if fw.err != nil {
		return fw.err
	}
	if err := fw.buf.Flush(); err != nil {
		fw.err = err
		return err
	}
	if err := fw.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		fw.err = err
	}
	fw.flushed = time.Now()
	return fw.err
}

// send writes one event's frames with write and flushes them, holding mu
// so that no keep-alive comment comes between them.
func (fw *frameWriter) send(write func() error) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if err := write(); err != nil {
		return err
	}
	return fw.flush()
}

// startKeepAlive runs keepAlive in its own goroutine; interval <= 0 runs
// nothing. The returned stop ends the goroutine and returns once it has
// (a write of its own in progress first ends, within the write timeout),
// so that nothing writes to the response after the handler returns.
func (fw *frameWriter) startKeepAlive(interval time.Duration, failed func()) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		fw.keepAlive(interval, quit, failed)
	}()
	return func() {
		close(quit)
		<-done
	}
}

// keepAliveComment is an SSE comment: a line starting with a colon, which
// clients ignore, and the blank line ending it.
const keepAliveComment = ": keep-alive\n\n"

// keepAlive sends keepAliveComment whenever nothing was sent for interval,
// until stop is closed: a proxy with a read timeout then does not cut a
// stream whose run waits for a slow tool or model. The comment goes under
// mu and the write deadline, as frames do; when its write fails, failed is
// called (to cancel the run, which may not write again for a long time).
func (fw *frameWriter) keepAlive(interval time.Duration, stop <-chan struct{}, failed func()) {
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		fw.mu.Lock()
		if fw.err != nil { // the run's own write failed: it stops
			fw.mu.Unlock()
			return
		}
		wait := interval - time.Since(fw.flushed)
		if wait <= 0 {
			fw.buf.WriteString(keepAliveComment)
			if fw.flush() != nil {
				fw.mu.Unlock()
				failed()
				return
			}
			wait = interval
		}
		fw.mu.Unlock()
		t.Reset(max(wait, time.Millisecond))
	}
}
