package uistream

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// frameWriter writes server-sent events to one response. Frames collect
// in a small buffer and go out at flush, once per run event, each write
// bounded by the write timeout: a client that stops reading blocks the
// run (which holds one event at a time, so memory does not grow) until
// the timeout fails the write and the handler cancels the run.
type frameWriter struct {
	rc      *http.ResponseController
	buf     *bufio.Writer
	timeout time.Duration
	err     error // the first write error; every later call returns it
}

// deadlineWriter is the response, each write under a fresh deadline.
type deadlineWriter struct {
	w  http.ResponseWriter
	fw *frameWriter
}

func (d deadlineWriter) Write(p []byte) (int, error) {
	if d.fw.timeout > 0 {
		// A server or test ResponseWriter without deadlines writes unbounded.
		_ = d.fw.rc.SetWriteDeadline(time.Now().Add(d.fw.timeout))
	}
	return d.w.Write(p)
}

func newFrameWriter(w http.ResponseWriter, timeout time.Duration) *frameWriter {
	fw := &frameWriter{rc: http.NewResponseController(w), timeout: timeout}
	fw.buf = bufio.NewWriterSize(deadlineWriter{w: w, fw: fw}, 4<<10)
	return fw
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
	return fw.err
}
